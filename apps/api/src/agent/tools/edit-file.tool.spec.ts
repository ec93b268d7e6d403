import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { countOccurrences, EditFileTool } from './edit-file.tool';
import { WorkspacePaths } from './workspace-paths';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(EditFileTool.name, () => {
  let base: string;
  let tool: EditFileTool;
  const target = () => path.join(base, 'ws', 'f.txt');

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-edit-'));
    mkdirSync(path.join(base, 'ws'));
    mkdirSync(path.join(base, 'skills', 'agent', 's1'), { recursive: true });
    writeFileSync(path.join(base, 'skills', 'agent', 's1', 'SKILL.md'), 'original');
    writeFileSync(target(), 'alpha beta gamma beta $& end');
    tool = new EditFileTool(new WorkspacePaths(path.join(base, 'ws'), [path.join(base, 'skills')]));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: a unique match is replaced literally', async () => {
    expect(await tool.execute({ path: 'f.txt', old_string: 'alpha', new_string: 'A$&' }, ctx())).toBe(
      'Replaced the specified content in f.txt',
    );
    expect(readFileSync(target(), 'utf8')).toBe('A$& beta gamma beta $& end');
  });

  it('Scenario: zero matches give the not-found message', async () => {
    expect(text(await tool.execute({ path: 'f.txt', old_string: 'delta', new_string: 'x' }, ctx()))).toBe(
      'Error: old_string was not found; check that it matches the file exactly (file: f.txt)',
    );
  });

  it('Scenario: several matches ask for more context', async () => {
    expect(text(await tool.execute({ path: 'f.txt', old_string: 'beta', new_string: 'x' }, ctx()))).toBe(
      'Error: old_string occurs 2 times in the file; include more surrounding context to make it unique',
    );
    expect(readFileSync(target(), 'utf8')).toBe('alpha beta gamma beta $& end');
  });

  it('Scenario: a missing file is reported', async () => {
    expect(text(await tool.execute({ path: 'no.txt', old_string: 'a', new_string: 'b' }, ctx()))).toBe(
      'Error: file not found: no.txt',
    );
  });

  it('Scenario: a protected skill file is refused wherever the workspace points', async () => {
    const overSkills = new EditFileTool(new WorkspacePaths(base, [path.join(base, 'skills')]));
    const out = await overSkills.execute({ path: 'skills/agent/s1/SKILL.md', old_string: 'original', new_string: 'x' }, ctx());
    expect(text(out)).toContain('agent_skill_manage');
    expect(readFileSync(path.join(base, 'skills', 'agent', 's1', 'SKILL.md'), 'utf8')).toBe('original');
  });

  it('Scenario: occurrences are counted without overlap', () => {
    expect(countOccurrences('aaaa', 'aa')).toBe(2);
    expect(countOccurrences('abc', 'd')).toBe(0);
  });
});
