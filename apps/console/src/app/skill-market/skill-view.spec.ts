import { describe, expect, it } from 'vitest';
import type { SkillRecord } from '@cashcode/contracts';

import { draftError, importFollowUp, metadataText, invalidRows, isManageable, isZipName, pageCount, sizeKb, statusOf, versionTime } from './skill-view';

const record = (overrides: Partial<SkillRecord> = {}): SkillRecord => ({
  name: 'weather',
  display_name: 'Weather',
  description: 'd',
  version: 1,
  version_label: null,
  tags: [],
  triggers: [],
  always: false,
  source: 'user',
  enabled: true,
  availability: 'available',
  missing: [],
  hash: 'h',
  shadowed_sources: [],
  shadows_builtin: false,
  validation_errors: [],
  requires: { tools: [], mcp_servers: [], bins: [], env: [] },
  optional: { tools: [], mcp_servers: [], bins: [], env: [] },
  mutable: true,
  license: null,
  compatibility: null,
  metadata: {},
  allowed_tools: null,
  ...overrides,
});

describe('skill-view', () => {
  it('Scenario: diagnostics become rows; unknown prefixes count as user; built-in rows are not removable', () => {
    const rows = invalidRows({
      'builtin:broken': ['bad'],
      'weird:thing': ['x\u0001y', 'b', 'c', 'd'],
      'user:long': ['m'.repeat(300)],
    });
    expect(rows.map((row) => [row.source, row.directory, row.removable])).toEqual([
      ['builtin', 'broken', false],
      ['user', 'long', true],
      ['user', 'thing', true],
    ]);
    expect(rows[2]?.errors).toEqual(['x y', 'b', 'c']);
    expect(Array.from(rows[1]?.errors[0] ?? '')).toHaveLength(240);
  });

  it('Scenario: a disabled Skill always shows disabled; only mutable non-built-in Skills are manageable', () => {
    expect(statusOf(record({ enabled: false, availability: 'missing_dependency' }))).toBe('disabled');
    expect(statusOf(record({ availability: 'missing_dependency' }))).toBe('missing_dependency');
    expect(isManageable(record())).toBe(true);
    expect(isManageable(record({ source: 'builtin', mutable: false }))).toBe(false);
  });

  it('Scenario: the editor validates drafts live with the server rules', () => {
    expect(draftError('---\nname: weather\ndescription: d\n---\nbody\n', 'weather')).toBeNull();
    expect(draftError('---\nname: other\ndescription: d\n---\nbody\n', 'weather')).toBe(
      'frontmatter name must match the package directory',
    );
    expect(draftError('', 'weather')).toBe('SKILL.md cannot be empty');
  });

  it('Scenario: paging, upload size and file names follow the reference client', () => {
    expect(pageCount(0, 20)).toBe(1);
    expect(pageCount(41, 20)).toBe(3);
    expect(sizeKb(1)).toBe(1);
    expect(sizeKb(2049)).toBe(3);
    expect(isZipName(' Skill.ZIP ')).toBe(true);
    expect(isZipName('skill.tar')).toBe(false);
    expect(isZipName('docx.skill')).toBe(true);
    expect(versionTime('1767225600000-1a2b3c4d', 'en')).toMatch(/2026|2025/);
    expect(versionTime('not-a-version', 'en')).toBeNull();
  });

  it('Scenario: a refused import offers replacing the built-in or a checklist of the archive\'s Skills', () => {
    expect(importFollowUp(409, 'skill_conflict', { replace_builtin: true })).toEqual({ kind: 'replace_builtin' });
    expect(importFollowUp(409, 'skill_conflict', {})).toBeNull();
    const skills = [
      { name: 'pdf', path: 'skills-main/skills/pdf', description: 'PDF', error: null },
      { name: null, path: 'skills-main/skills/broken', description: null, error: 'SKILL.md must start with YAML frontmatter' },
      { path: 42 },
    ];
    expect(importFollowUp(422, 'skill_archive_multiple', { skills })).toEqual({ kind: 'select', candidates: skills.slice(0, 2) });
    expect(importFollowUp(422, 'skill_validation', { skills })).toBeNull();
  });

  it('Scenario: metadata values are shown as text', () => {
    expect(metadataText({ metadata: { tags: '["docs","office"]', version: '2', long: 'x'.repeat(100) } })).toEqual([
      'tags: ["docs","office"]',
      'version: 2',
      `long: ${'x'.repeat(73)}…`,
    ]);
    expect(metadataText({ metadata: {} })).toEqual([]);
  });
});
