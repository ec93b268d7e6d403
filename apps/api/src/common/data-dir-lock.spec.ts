import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE_NAME } from './data-dir-lock';

describe('acquireDataDirLock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-lock-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: a second holder is refused until the first releases', async () => {
    const first = await acquireDataDirLock(dir);
    await expect(acquireDataDirLock(dir)).rejects.toBeInstanceOf(DataDirLockedError);
    await first.release();
    const again = await acquireDataDirLock(dir);
    await again.release();
    await expect(fs.access(join(dir, LOCK_FILE_NAME))).rejects.toThrow();
  });

  it('Scenario: a lock of a live other process is refused', async () => {
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: process.ppid, token: 't', startedAt: '' }));
    await expect(acquireDataDirLock(dir)).rejects.toThrow(/pid \d+/);
  });

  it('Scenario: a stale lock (dead pid or garbage) is taken over', async () => {
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: 2 ** 22 + 999, token: 't', startedAt: '' }));
    const lock = await acquireDataDirLock(dir);
    const content = JSON.parse(await fs.readFile(lock.path, 'utf8'));
    expect(content.pid).toBe(process.pid);
    await lock.release();
    await fs.writeFile(join(dir, LOCK_FILE_NAME), 'not json');
    const lock2 = await acquireDataDirLock(dir);
    await lock2.release();
  });
});
