import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  acquireDataDirLock,
  DataDirLockedError,
  isZombieProcess,
  LOCK_FILE_NAME,
  PREVIOUS_SERVER_WAIT_MS,
} from './data-dir-lock';

const onLinux = existsSync('/proc/self/stat');

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

  it('Scenario: the lock file (0600) names the pid, the start time and the status socket, which answers while held', async () => {
    const lock = await acquireDataDirLock(dir);
    const stat = await fs.stat(lock.path);
    if (process.platform !== 'win32') expect(stat.mode & 0o777).toBe(0o600);
    const content = JSON.parse(await fs.readFile(lock.path, 'utf8'));
    expect(content).toMatchObject({ pid: process.pid, socket: lock.socketPath });
    expect(Number.isNaN(Date.parse(content.startedAt))).toBe(false);
    expect(dirname(lock.socketPath)).toBe(dir);
    expect(lock.socketPath).toMatch(/\.cashcode-[0-9a-f]{16}\.sock$/);
    await lock.release();
    // releasing closes the socket and removes its file
    expect(existsSync(lock.socketPath)).toBe(false);
    expect(existsSync(lock.path)).toBe(false);
  });

  it('Scenario: apps of one process on different data dirs each hold their own lock', async () => {
    const other = await fs.mkdtemp(join(tmpdir(), 'cashcode-lock-'));
    try {
      const a = await acquireDataDirLock(dir);
      const b = await acquireDataDirLock(other);
      await expect(acquireDataDirLock(dir)).rejects.toThrow(`(pid ${process.pid})`);
      await a.release();
      await b.release();
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('Scenario: a lock of a live other process is refused', async () => {
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: process.ppid, token: 't', startedAt: '' }));
    await expect(acquireDataDirLock(dir)).rejects.toThrow(/pid \d+/);
  });

  it('Scenario: a stale lock (dead pid, garbage, or a status socket nobody listens on) is taken over', async () => {
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: 2 ** 22 + 999, token: 't', startedAt: '' }));
    const lock = await acquireDataDirLock(dir);
    const content = JSON.parse(await fs.readFile(lock.path, 'utf8'));
    expect(content.pid).toBe(process.pid);
    await lock.release();
    await fs.writeFile(join(dir, LOCK_FILE_NAME), 'not json');
    const lock2 = await acquireDataDirLock(dir);
    await lock2.release();
    // a live pid (the parent) but a socket nobody listens on: the socket decides, and the leftover file is removed
    const leftover = join(dir, '.cashcode-00000000deadbeef.sock');
    await fs.writeFile(leftover, '');
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: process.ppid, token: 't', startedAt: '', socket: leftover }));
    const lock3 = await acquireDataDirLock(dir);
    expect(existsSync(leftover)).toBe(false);
    await lock3.release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  (onLinux ? it : it.skip)('Scenario: a lock without a socket whose pid is a zombie is taken over', async () => {
    // `sh` starts a child in the background and becomes `sleep`, which never reaps it: killed, the child stays a zombie
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const poll = async (done: () => boolean) => {
      for (let i = 0; i < 1_000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    try {
      const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))));
      // once the shell has become `sleep`, nothing reaps the child any more
      const comm = () => readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim();
      await poll(() => comm() === 'sleep');
      process.kill(pid, 'SIGKILL');
      await poll(() => isZombieProcess(pid));
      expect(isZombieProcess(pid)).toBe(true);
      expect(() => process.kill(pid, 0)).not.toThrow();
      await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid, token: 't', startedAt: '' }));
      const lock = await acquireDataDirLock(dir);
      await lock.release();
    } finally {
      parent.kill('SIGKILL');
    }
    expect(isZombieProcess(process.pid)).toBe(false);
  });

  it('Scenario: a start waits for a holder that is shutting down, with one notice, and then takes the lock', async () => {
    const previous = await acquireDataDirLock(dir);
    previous.markStopping();
    const waiting: number[] = [];
    const next = acquireDataDirLock(dir, { onWaiting: (pid) => waiting.push(pid) });
    for (let i = 0; i < 500 && waiting.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(waiting).toEqual([process.pid]);
    // still waiting a few polls later
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(previous.socketPath)).toBe(true);
    await previous.release();
    const lock = await next;
    expect(waiting).toEqual([process.pid]);
    expect(JSON.parse(await fs.readFile(lock.path, 'utf8')).socket).toBe(lock.socketPath);
    await lock.release();
  });

  it('Scenario: a holder still shutting down when the wait ends is refused, saying so', async () => {
    expect(PREVIOUS_SERVER_WAIT_MS).toBe(15_000);
    const previous = await acquireDataDirLock(dir);
    previous.markStopping();
    const refused = await acquireDataDirLock(dir, { waitMs: 300 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as DataDirLockedError).stillStopping).toBe(true);
    expect((refused as Error).message).toMatch(/already using the data directory .* \(it did not finish shutting down within 15 s\)/);
    await previous.release();
  });

  it('Scenario: a holder that accepts but never answers is waited for, then refused', async () => {
    // a live process whose event loop does not answer: the socket accepts (the kernel does that) but says nothing
    const socket = join(dir, '.cashcode-0123456789abcdef.sock');
    const mute = createServer(() => undefined);
    await new Promise<void>((resolve) => mute.listen(socket, resolve));
    try {
      await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: 12345, token: 't', startedAt: '', socket }));
      const refused = await acquireDataDirLock(dir, { waitMs: 100 }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DataDirLockedError);
      expect((refused as Error).message).toContain('(pid 12345)');
    } finally {
      mute.close();
    }
  });

  it('Scenario: releaseSync (a forced exit) removes the lock file and the socket', async () => {
    const lock = await acquireDataDirLock(dir);
    lock.releaseSync();
    expect(existsSync(lock.path)).toBe(false);
    expect(existsSync(lock.socketPath)).toBe(false);
    await lock.release(); // idempotent
    const again = await acquireDataDirLock(dir);
    await again.release();
  });

  it('Scenario: a release never removes a lock another holder published meanwhile', async () => {
    const lock = await acquireDataDirLock(dir);
    const foreign = JSON.stringify({ pid: 2 ** 22 + 7, token: 'someone-else', startedAt: '' });
    await fs.writeFile(lock.path, foreign);
    await lock.release();
    expect(readFileSync(lock.path, 'utf8')).toBe(foreign);
  });

  it('Scenario: concurrent starts on a stale lock: exactly one wins', async () => {
    await fs.writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: 2 ** 22 + 999, token: 't', startedAt: '' }));
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => acquireDataDirLock(dir)));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DataDirLockedError);
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireDataDirLock>>>).value.release();
  });

  (process.platform === 'win32' ? it.skip : it)('Scenario: a data dir too deep for a Unix socket path keeps its socket in the temp dir', async () => {
    const deep = join(dir, 'd'.repeat(60), 'e'.repeat(60));
    await fs.mkdir(deep, { recursive: true });
    const lock = await acquireDataDirLock(deep);
    expect(dirname(lock.socketPath)).toBe(tmpdir());
    expect(lock.socketPath).toMatch(/cashcode-[0-9a-f]{16}-[0-9a-f]{16}\.sock$/);
    await expect(acquireDataDirLock(deep)).rejects.toBeInstanceOf(DataDirLockedError);
    await lock.release();
    expect(existsSync(lock.socketPath)).toBe(false);
    const again = await acquireDataDirLock(deep);
    await again.release();
  });
});
