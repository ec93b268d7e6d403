import { describe, expect, it } from 'vitest';
import type { SkillPreApprovalItem, SkillPreApprovals, SkillRecord } from '@cashcode/contracts';
import { awaitingApproval, importedAwaitingApproval, preApprovalItemText } from './pre-approvals-view';

const item = (partial: Partial<SkillPreApprovalItem>): SkillPreApprovalItem => ({
  entry: 'Bash',
  kind: 'any_command',
  value: '',
  broad: true,
  text: 'any shell command',
  ...partial,
});

const pre = (granted: boolean, requested = ['Bash']): SkillPreApprovals => ({
  requested,
  granted,
  hash: 'a'.repeat(64),
  summary: [],
  broad: true,
});

describe('pre-approvals view', () => {
  it('Scenario: each allowed-tools entry is worded by what it lets run, broad prefixes as any command', () => {
    expect(preApprovalItemText(item({})).key).toBe('skills.pre.item.any_command');
    expect(preApprovalItemText(item({ kind: 'command_prefix', value: 'git status', broad: false }))).toEqual({
      key: 'skills.pre.item.command_prefix',
      params: { value: 'git status', server: '', entry: 'Bash' },
    });
    expect(preApprovalItemText(item({ kind: 'command_prefix', value: 'git', broad: true })).key).toBe(
      'skills.pre.item.command_prefix_broad',
    );
    expect(preApprovalItemText(item({ kind: 'mcp_server', value: 'files', server: 'files', broad: false })).params['server']).toBe('files');
    expect(preApprovalItemText(item({ kind: 'ignored', entry: 'Read(./src/**)' })).key).toBe('skills.pre.item.ignored');
  });

  it('Scenario: a Skill waits for approval only when it requests pre-approvals that are not granted', () => {
    expect(awaitingApproval(null)).toBe(false);
    expect(awaitingApproval(pre(true))).toBe(false);
    expect(awaitingApproval(pre(false))).toBe(true);
    const records = [
      { name: 'a', pre_approvals: pre(false) },
      { name: 'b', pre_approvals: null },
      { name: 'c', pre_approvals: pre(true) },
    ] as unknown as SkillRecord[];
    expect(importedAwaitingApproval(records).map((record) => record.name)).toEqual(['a']);
  });
});
