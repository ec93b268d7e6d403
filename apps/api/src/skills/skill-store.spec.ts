/** SkillStore on real roots in a temp dir: reading and validating packages, staging, publication, snapshots. */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_MESSAGES } from './skill-package-reader';
import type { SkillMeta } from './skill-publication';
import { isPlausibleVersion } from './skill-snapshots';
import { SkillStore } from './skill-store';

const md = (name: string, body = 'Do the thing.') => `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n${body}\n`;
const meta = (enabled = true): SkillMeta => ({ source: 'user', enabled, storage_version: 1, updated_at: 1, agentCreated: false });

describe('SkillStore', () => {
  let dir: string;
  let store: SkillStore;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-store-'));
    store = new SkillStore({ builtin: join(dir, 'builtin'), user: join(dir, 'user'), agent: join(dir, 'agent'), snapshots: join(dir, 'snap') });
    await store.prepare();
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  async function publish(name: string, files: Record<string, string> = {}, enabled = true): Promise<void> {
    const staged = await store.stage('user');
    await staged.writeFile('SKILL.md', md(name));
    for (const [rel, text] of Object.entries(files)) await staged.writeFile(rel, text);
    await staged.writeMeta(meta(enabled));
    expect(await store.publishNew(staged, name)).toBe(true);
  }

  it('Scenario: prepare creates the writable roots and removes staging leftovers of a crash', async () => {
    await fs.mkdir(join(dir, 'user', '.skill-stage.dead'), { recursive: true });
    await store.prepare();
    expect(await fs.readdir(join(dir, 'user'))).toEqual([]);
    expect((await fs.stat(join(dir, 'agent'))).isDirectory()).toBe(true);
    expect((await fs.stat(join(dir, 'snap'))).isDirectory()).toBe(true);
    // the built-in root is never created or written
    expect(await store.listDirectories('builtin')).toEqual([]);
  });

  it('Scenario: a published package reads back with its manifest, hash, enabled flag and files', async () => {
    await publish('weather', { 'references/guide.md': 'guide' }, false);
    expect(await store.listDirectories('user')).toEqual(['weather']);
    expect(await store.directoryExists('user', 'weather')).toBe(true);
    expect(await store.directoryExists('user', '../user')).toBe(false);
    const read = await store.readPackage('user', 'weather');
    if (!read.ok) throw new Error(read.error);
    expect(read.pkg).toMatchObject({ source: 'user', directory: 'weather', enabled: false, files: ['references/guide.md'] });
    expect(read.pkg.manifest.name).toBe('weather');
    expect(read.pkg.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(read.pkg.content).toBe(md('weather'));
    expect((await store.readSkillFile('user', 'weather'))?.toString()).toBe(md('weather'));
    expect((await store.readResource('user', 'weather', 'references/guide.md'))?.toString()).toBe('guide');
    expect(await store.readResource('user', 'weather', 'missing.md')).toBeNull();
    expect(await store.readMeta('user', 'weather')).toMatchObject({ enabled: false });
    // a second publication under a taken name is refused
    const again = await store.stage('user');
    await again.writeFile('SKILL.md', md('weather'));
    expect(await store.publishNew(again, 'weather')).toBe(false);
    await again.discard();
  });

  it('Scenario: invalid packages are reported, not thrown', async () => {
    await fs.mkdir(join(dir, 'user', 'empty'));
    expect(await store.readPackage('user', 'empty')).toEqual({ ok: false, error: PACKAGE_MESSAGES.skillMdNotFound });
    await fs.mkdir(join(dir, 'user', 'other'));
    await fs.writeFile(join(dir, 'user', 'other', 'SKILL.md'), md('not-other'));
    expect((await store.readPackage('user', 'other')).ok).toBe(false);
    await fs.mkdir(join(dir, 'user', 'meta'));
    await fs.writeFile(join(dir, 'user', 'meta', 'SKILL.md'), md('meta'));
    await fs.writeFile(join(dir, 'user', 'meta', '_meta.json'), '{not json');
    expect(await store.readPackage('user', 'meta')).toEqual({ ok: false, error: PACKAGE_MESSAGES.invalidMeta });
  });

  it('Scenario: a symlink that leaves the package makes it invalid and is never read as a resource', async () => {
    await publish('linked');
    await fs.writeFile(join(dir, 'secret.txt'), 'secret');
    await fs.symlink(join(dir, 'secret.txt'), join(dir, 'user', 'linked', 'leak.txt'));
    expect(await store.readPackage('user', 'linked')).toEqual({ ok: false, error: PACKAGE_MESSAGES.symlinkEscapes('leak.txt') });
    expect(await store.readResource('user', 'linked', 'leak.txt')).toBeNull();
  });

  it('Scenario: snapshot, replace, copy back from a snapshot, remove', async () => {
    await publish('weather');
    const version = await store.snapshot('user', 'weather');
    expect(isPlausibleVersion(version)).toBe(true);
    expect(await store.listVersions('user', 'weather')).toEqual([version]);
    expect(await store.snapshotExists('user', 'weather', version)).toBe(true);
    expect(await store.snapshotExists('user', 'weather', '../x')).toBe(false);

    const staged = await store.stage('user');
    await store.copyInto(staged, 'user', 'weather');
    await staged.removeFile('SKILL.md');
    await staged.writeFile('SKILL.md', md('weather', 'Version two.'));
    await store.publishReplace(staged, 'weather');
    expect((await store.readSkillFile('user', 'weather'))?.toString()).toContain('Version two.');

    const back = await store.stage('user');
    await store.copySnapshotInto(back, 'user', 'weather', version);
    const checked = await store.readStaged(back, 'weather');
    expect(checked.ok && checked.pkg.body).toContain('Do the thing.');
    await store.publishReplace(back, 'weather');
    expect((await store.readSkillFile('user', 'weather'))?.toString()).toBe(md('weather'));
    // no working directories are left behind
    expect(await fs.readdir(join(dir, 'user'))).toEqual(['weather']);

    await store.remove('user', 'weather');
    expect(await store.listDirectories('user')).toEqual([]);
    expect(await store.listVersions('user', 'weather')).toEqual([version]);
  });

  it('Scenario: an invalid package is moved to the snapshots, and the move can be undone', async () => {
    await fs.mkdir(join(dir, 'user', 'broken'));
    await fs.writeFile(join(dir, 'user', 'broken', 'SKILL.md'), 'nope');
    expect(await store.isDirectChildDirectory('user', 'broken')).toBe(true);
    const moved = await store.moveInvalid('user', 'broken', 'abc123');
    expect(moved.snapshot).toMatch(/^invalid\/user\/abc123\/\d+-[0-9a-f]{8}$/);
    expect(await store.isDirectChildDirectory('user', 'broken')).toBe(false);
    await moved.undo();
    expect(await store.isDirectChildDirectory('user', 'broken')).toBe(true);
  });
});
