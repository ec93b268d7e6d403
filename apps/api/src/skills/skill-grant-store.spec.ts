import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { SkillGrantStore } from './skill-grant-store';
import { packageContentHash, packageFingerprint } from './skill-package-hash';

const HASH = 'b'.repeat(64);
const grant = { name: 'notes', source: 'user' as const, hash: HASH, allowed_tools: ['Bash(git status:*)'], granted_at: '2026-01-01T00:00:00.000Z' };

describe('SkillGrantStore', () => {
  let dir: string;
  let store: SkillGrantStore;
  const file = () => join(dir, 'approvals', 'skill-grants.json');

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-grants-'));
    store = new SkillGrantStore({ dataDir: dir } as AppConfig);
  });

  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('stores a grant owner-only, reads it back and removes it', async () => {
    await store.load();
    await store.put(grant);
    expect((await fs.stat(file())).mode & 0o777).toBe(0o600);
    const again = new SkillGrantStore({ dataDir: dir } as AppConfig);
    await again.load();
    expect(again.matches('user', 'notes', HASH)).toBe(true);
    expect(again.matches('agent', 'notes', HASH)).toBe(false);
    expect(again.matches('user', 'notes', 'c'.repeat(64))).toBe(false);
    expect(await again.remove('user', 'notes')).toMatchObject({ name: 'notes' });
    expect(await again.remove('user', 'notes')).toBeNull();
    expect(JSON.parse(await fs.readFile(file(), 'utf8'))).toEqual({ version: 1, grants: [] });
  });

  it('a corrupt file is no grants and logged, never a failed start; invalid entries are skipped', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await fs.mkdir(join(dir, 'approvals'), { recursive: true });
    for (const text of ['{not json', '[]', '{"version": 2, "grants": []}']) {
      await fs.writeFile(file(), text);
      await expect(store.load()).resolves.toBeUndefined();
      expect(store.list()).toEqual([]);
    }
    expect(errors).toHaveBeenCalledTimes(3);
    const bad = [{ ...grant, hash: 'short' }, { ...grant, name: '../x' }, { ...grant, source: 'root' }, { ...grant, allowed_tools: [] }];
    await fs.writeFile(file(), JSON.stringify({ version: 1, grants: [...bad, grant] }));
    await store.load();
    expect(store.list()).toEqual([grant]);
    expect(warnings).toHaveBeenCalled();
    errors.mockRestore();
    warnings.mockRestore();
  });
});

describe('Skill package hash', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-pkg-'));
    await fs.mkdir(join(dir, 'scripts'));
    await fs.writeFile(join(dir, 'SKILL.md'), '---\nname: x\ndescription: y\n---\n');
    await fs.writeFile(join(dir, 'scripts', 'run.sh'), 'echo hi\n');
    await fs.writeFile(join(dir, '_meta.json'), '{"enabled": true}');
  });

  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('covers SKILL.md and every supporting file, not _meta.json; the fingerprint notices a changed script', async () => {
    const files = ['scripts/run.sh'];
    const first = await packageContentHash(dir, files);
    const print = packageFingerprint(dir);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    await fs.writeFile(join(dir, '_meta.json'), '{"enabled": false}');
    expect(await packageContentHash(dir, files)).toBe(first);
    expect(packageFingerprint(dir)).toBe(print);
    await fs.writeFile(join(dir, 'scripts', 'run.sh'), 'id\n');
    expect(await packageContentHash(dir, files)).not.toBe(first);
    expect(packageFingerprint(dir)).not.toBe(print);
    // a renamed file with the same bytes is other content too
    await fs.writeFile(join(dir, 'scripts', 'run.sh'), 'echo hi\n');
    await fs.rename(join(dir, 'scripts', 'run.sh'), join(dir, 'scripts', 'go.sh'));
    expect(await packageContentHash(dir, ['scripts/go.sh'])).not.toBe(first);
    expect(packageFingerprint(join(dir, 'missing'))).toBeNull();
  });
});
