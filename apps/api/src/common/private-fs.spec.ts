import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  copyTreePrivate,
  createPrivateWriteStream,
  mkdirPrivate,
  mkdirPrivateSync,
  openPrivate,
  tightenPrivateRoots,
  tightenTree,
  writeFilePrivate,
} from './private-fs';

const modeOf = async (path: string) => (await fs.lstat(path)).mode & 0o777;

describe('private-fs', () => {
  let dir: string;
  let previousUmask: number;

  beforeEach(async () => {
    previousUmask = process.umask(0o022);
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-private-'));
  });

  afterEach(async () => {
    process.umask(previousUmask);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('mkdirPrivate creates every missing parent 0700 and leaves existing folders alone', async () => {
    await fs.mkdir(join(dir, 'existing'), { mode: 0o755 });
    await mkdirPrivate(join(dir, 'existing', 'a', 'b', 'c'));
    mkdirPrivateSync(join(dir, 'sync', 'x'));
    expect(await modeOf(join(dir, 'existing'))).toBe(0o755);
    for (const created of ['existing/a', 'existing/a/b', 'existing/a/b/c', 'sync', 'sync/x']) {
      expect([created, await modeOf(join(dir, created))]).toEqual([created, 0o700]);
    }
    await mkdirPrivate(join(dir, 'existing', 'a')); // exists: no error
  });

  it('creates 0700 folders even under a umask that removes owner bits', async () => {
    process.umask(0o277);
    await mkdirPrivate(join(dir, 'odd', 'deeper'));
    expect(await modeOf(join(dir, 'odd'))).toBe(0o700);
    expect(await modeOf(join(dir, 'odd', 'deeper'))).toBe(0o700);
  });

  it('files are created 0600; writeFilePrivate also fixes an existing file', async () => {
    await fs.writeFile(join(dir, 'old.txt'), 'x', { mode: 0o644 });
    await writeFilePrivate(join(dir, 'old.txt'), 'y');
    await writeFilePrivate(join(dir, 'new.txt'), 'z', 'wx');
    await expect(writeFilePrivate(join(dir, 'new.txt'), 'again', 'wx')).rejects.toMatchObject({ code: 'EEXIST' });
    const handle = await openPrivate(join(dir, 'append.log'), 'a');
    await handle.close();
    const stream = createPrivateWriteStream(join(dir, 'stream.bin'));
    await new Promise<void>((resolve, reject) => stream.end('data', () => resolve()).on('error', reject));
    for (const name of ['old.txt', 'new.txt', 'append.log', 'stream.bin']) {
      expect([name, await modeOf(join(dir, name))]).toEqual([name, 0o600]);
    }
    expect(await fs.readFile(join(dir, 'old.txt'), 'utf8')).toBe('y');
  });

  it('copyTreePrivate tightens what fs.cp copied with the source modes', async () => {
    const source = join(dir, 'src');
    await fs.mkdir(join(source, 'sub'), { recursive: true, mode: 0o755 });
    await fs.writeFile(join(source, 'sub', 'a.txt'), 'a', { mode: 0o644 });
    await fs.writeFile(join(source, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await copyTreePrivate(source, join(dir, 'copy'), { recursive: true });
    expect(await modeOf(join(dir, 'copy'))).toBe(0o700);
    expect(await modeOf(join(dir, 'copy', 'sub'))).toBe(0o700);
    expect(await modeOf(join(dir, 'copy', 'sub', 'a.txt'))).toBe(0o600);
    expect(await modeOf(join(dir, 'copy', 'run.sh'))).toBe(0o700);
    expect(await modeOf(join(source, 'sub', 'a.txt'))).toBe(0o644);
  });

  it('tightenTree skips given paths, never follows or changes links, and stops at maxEntries', async () => {
    const root = join(dir, 'root');
    await fs.mkdir(join(root, 'skipped', 'inner'), { recursive: true, mode: 0o755 });
    await fs.writeFile(join(root, 'skipped', 'inner', 'f'), 'f', { mode: 0o644 });
    await fs.writeFile(join(root, 'a'), 'a', { mode: 0o644 });
    await fs.writeFile(join(root, 'private'), 'p', { mode: 0o600 });
    const outside = join(dir, 'outside');
    await fs.mkdir(outside, { mode: 0o755 });
    await fs.writeFile(join(outside, 'shared'), 's', { mode: 0o644 });
    await fs.symlink(outside, join(root, 'link-dir'));
    await fs.symlink(join(outside, 'shared'), join(root, 'link-file'));
    await fs.chmod(root, 0o755);

    const result = tightenTree(root, { skip: [join(root, 'skipped')] });
    expect(result).toEqual({ changed: 2, failed: 0, truncated: false }); // root + a
    expect(await modeOf(root)).toBe(0o700);
    expect(await modeOf(join(root, 'a'))).toBe(0o600);
    expect(await modeOf(join(root, 'skipped'))).toBe(0o755);
    expect(await modeOf(join(root, 'skipped', 'inner', 'f'))).toBe(0o644);
    expect(await modeOf(outside)).toBe(0o755);
    expect(await modeOf(join(outside, 'shared'))).toBe(0o644);
    expect(tightenTree(root)).toEqual({ changed: 3, failed: 0, truncated: false }); // skipped + inner + f
    expect(tightenTree(root)).toEqual({ changed: 0, failed: 0, truncated: false });
    expect(tightenTree(root, { maxEntries: 2 }).truncated).toBe(true);
    expect(tightenTree(join(dir, 'missing'))).toEqual({ changed: 0, failed: 0, truncated: false });
  });

  it('tightenPrivateRoots walks a root nested in another once', async () => {
    await fs.mkdir(join(dir, 'data', 'memory'), { recursive: true, mode: 0o755 });
    await fs.chmod(join(dir, 'data'), 0o755);
    const results = tightenPrivateRoots([join(dir, 'data'), join(dir, 'data', 'memory'), join(dir, 'data')], []);
    expect(results).toEqual([{ root: join(dir, 'data'), changed: 2, failed: 0, truncated: false }]);
  });
});
