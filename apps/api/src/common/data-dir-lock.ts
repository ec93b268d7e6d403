/**
 * One server per data directory.
 *
 * The holder publishes `<dataDir>/.cashcode.lock` (mode 0600: pid, random token, start time and the path of its
 * status socket) and listens on that status socket for as long as it holds the lock. Whether the holder is alive is
 * decided by connecting to the socket, never by the pid: the kernel closes a process's sockets the moment it dies
 * (kill -9, OOM, container stop), also while the dead process waits as a zombie for a parent that never reaps it, and
 * a recycled pid (a container restart gives the new server the old pid) proves nothing either. A connection is
 * answered with one JSON line `{"service":"cashcode","pid":N,"state":"running"|"stopping"}`: the holder switches to
 * `stopping` when its shutdown begins, and a new start waits (bounded) for such a holder instead of refusing.
 *
 * The socket lives next to the lock file (`<dataDir>/.cashcode-<token>.sock`); when that path does not fit a Unix
 * socket address (about 104 bytes), in the OS temp directory, named after a hash of the data directory's real path
 * (a named pipe on Windows). The lock file names it, so a starter never has to guess.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export const LOCK_FILE_NAME = '.cashcode.lock';
/** how long a start waits for a previous server that is shutting down (or not answering) before it refuses */
export const PREVIOUS_SERVER_WAIT_MS = 15_000;
/** how long one status query waits for the holder's answer */
const STATUS_TIMEOUT_MS = 2_000;
/** pause between two looks at a holder that is shutting down */
const POLL_INTERVAL_MS = 50;
/** longest Unix socket path used in the data directory (sun_path is 104 bytes on macOS, 108 on Linux, with the NUL) */
const MAX_SOCKET_PATH_BYTES = 100;

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    /** true when the holder was still shutting down (or not answering) when the wait ended */
    readonly stillStopping = false,
  ) {
    super(
      `Another CashCode server (pid ${pid}) is already using the data directory ${dataDir}` +
        (stillStopping ? ` (it did not finish shutting down within ${PREVIOUS_SERVER_WAIT_MS / 1000} s)` : '') +
        '; stop it or set CASHCODE_DATA_DIR to another directory',
    );
    this.name = 'DataDirLockedError';
  }
}

interface LockContent {
  pid: number;
  token: string;
  startedAt: string;
  /** the holder's status socket; absent in locks written before the socket existed (then the pid decides) */
  socket?: string;
}

type HolderState = 'running' | 'stopping';

/** What a look at the current holder found. */
type Verdict =
  | { kind: 'dead' }
  | { kind: 'alive'; state: HolderState }
  /** the process lives (the socket accepted) but did not answer in time: busy or hung */
  | { kind: 'unresponsive' };

export interface DataDirLock {
  readonly path: string;
  /** the status socket this holder listens on */
  readonly socketPath: string;
  /** From now on the status socket answers `stopping`: a new start waits for this holder instead of refusing. */
  markStopping(): void;
  /** Removes the lock file (if still ours), then stops the status socket. Idempotent. */
  release(): Promise<void>;
  /** The same, synchronously and best effort: for a forced exit, where nothing asynchronous runs any more. */
  releaseSync(): void;
}

export interface AcquireDataDirLockOptions {
  /** called once when the start begins to wait for a previous server that is shutting down */
  onWaiting?: (pid: number) => void;
  /** defaults to PREVIOUS_SERVER_WAIT_MS */
  waitMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/** A zombie (exited, not reaped) or dead task, from /proc/<pid>/stat on Linux; elsewhere false. */
export function isZombieProcess(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S …": comm may contain spaces and parentheses, the state follows the last ')'
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

function parseLock(text: string): LockContent | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const lock = parsed as Partial<LockContent>;
    if (typeof lock.pid !== 'number') return null;
    return {
      pid: lock.pid,
      token: typeof lock.token === 'string' ? lock.token : '',
      startedAt: typeof lock.startedAt === 'string' ? lock.startedAt : '',
      ...(typeof lock.socket === 'string' && lock.socket !== '' ? { socket: lock.socket } : {}),
    };
  } catch {
    return null;
  }
}

async function readText(path: string): Promise<string | null> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Where this holder's status socket may listen, in order of preference (see the file comment): beside the lock file
 * when the path fits a socket address, else (or when the data directory's file system cannot hold a socket, e.g. some
 * shared folders of virtual machines) in the OS temp directory.
 */
function statusSocketPaths(dataDir: string, token: string): string[] {
  let real = dataDir;
  try {
    real = realpathSync(dataDir);
  } catch {
    // the directory exists (createDataDirectories); keep the given path if it cannot be resolved
  }
  const key = createHash('sha256').update(real).digest('hex').slice(0, 16);
  if (process.platform === 'win32') return [`\\\\.\\pipe\\cashcode-${key}-${token}`];
  const inTemp = join(tmpdir(), `cashcode-${key}-${token}.sock`);
  const beside = join(dataDir, `.cashcode-${token}.sock`);
  return Buffer.byteLength(beside) <= MAX_SOCKET_PATH_BYTES ? [beside, inTemp] : [inTemp];
}

/** Only files this module creates are ever unlinked on behalf of a stale lock. */
function isOurSocketName(path: string): boolean {
  return /^\.?cashcode-[0-9a-f-]+\.sock$/.test(basename(path));
}

/** Asks the holder behind `socketPath` for its state. */
function queryHolder(socketPath: string): Promise<Verdict> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    let text = '';
    const finish = (verdict: Verdict) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => finish({ kind: 'unresponsive' }), STATUS_TIMEOUT_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end === -1) return;
      try {
        const answer = JSON.parse(text.slice(0, end)) as { state?: unknown };
        finish({ kind: 'alive', state: answer.state === 'stopping' ? 'stopping' : 'running' });
      } catch {
        finish({ kind: 'alive', state: 'running' });
      }
    });
    socket.on('end', () => {
      // closed without a full answer: the holder is going away right now; look again
      if (!text.includes('\n')) finish({ kind: 'unresponsive' });
    });
    socket.on('error', (error) => {
      const code = errorCode(error);
      // nobody listens: the holder is gone, whatever its pid now names (ENOTSOCK/EINVAL: not a socket at all)
      if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ENOTSOCK' || code === 'EINVAL') finish({ kind: 'dead' });
      // EAGAIN (backlog full), ECONNRESET (closing right now), …: alive or in between; look again
      else finish({ kind: 'unresponsive' });
    });
  });
}

async function inspectHolder(existing: LockContent): Promise<Verdict> {
  if (existing.socket !== undefined) return queryHolder(existing.socket);
  // A lock without a socket (written by an older version): the pid decides; a zombie counts as dead, and so does our
  // own pid (a restarted container often gives the new server the pid of the old one).
  if (existing.pid === process.pid || !isProcessAlive(existing.pid) || isZombieProcess(existing.pid)) return { kind: 'dead' };
  return { kind: 'alive', state: 'running' };
}

/**
 * Removes a stale lock file, but only if it still holds `staleText`: it is first renamed to a name only this starter
 * uses (an atomic step another starter cannot share), then compared; a lock published meanwhile by someone else is
 * put back.
 */
async function removeStaleLock(path: string, staleText: string, ownToken: string): Promise<void> {
  const grave = `${path}.stale-${ownToken}`;
  try {
    await fs.rename(path, grave);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return; // someone else removed it
    throw error;
  }
  const taken = await readText(grave);
  if (taken !== null && taken !== staleText) {
    await fs.link(grave, path).catch(() => undefined);
  } else {
    const socket = parseLock(staleText)?.socket;
    if (socket !== undefined && isOurSocketName(socket)) await fs.rm(socket, { force: true }).catch(() => undefined);
  }
  await fs.rm(grave, { force: true });
}

/** Publishes the lock file in one step (a complete file or none), or returns false when one exists. */
async function publishLock(path: string, text: string, token: string): Promise<boolean> {
  const temp = `${path}.${token}.tmp`;
  await fs.writeFile(temp, text, { flag: 'w', mode: 0o600 });
  try {
    await fs.link(temp, path);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
  } finally {
    await fs.rm(temp, { force: true });
  }
  // a file system without hard links: exclusive create (a reader may see it empty for an instant)
  try {
    await fs.writeFile(path, text, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

interface StatusSocket {
  readonly path: string;
  state: HolderState;
  close(): Promise<void>;
  closeSync(): void;
}

async function listenStatusSocket(path: string): Promise<StatusSocket> {
  const holder = { state: 'running' as HolderState };
  const server: Server = createServer((connection) => {
    connection.on('error', () => undefined);
    connection.end(`${JSON.stringify({ service: 'cashcode', pid: process.pid, state: holder.state })}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  // never what keeps the process alive: the HTTP server does that, and a forced exit must not wait for this one
  server.unref();
  if (process.platform !== 'win32') await fs.chmod(path, 0o600).catch(() => undefined);
  let closed = false;
  return {
    path,
    get state() {
      return holder.state;
    },
    set state(value: HolderState) {
      holder.state = value;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      // net.Server unlinks its Unix socket file when it closes
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    closeSync: () => {
      if (closed) return;
      closed = true;
      server.close();
      if (process.platform !== 'win32') {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    },
  };
}

/**
 * Takes the data directory's lock: listens on a fresh status socket, then publishes the lock file naming it.
 * An existing lock is looked at through its holder's socket:
 * - nobody listens (the holder died, even as an unreaped zombie) → the stale lock is taken over;
 * - the holder answers `running` (another server, or another app of this process) → DataDirLockedError at once;
 * - the holder answers `stopping`, or accepts without answering → wait, up to PREVIOUS_SERVER_WAIT_MS, then
 *   DataDirLockedError.
 */
export async function acquireDataDirLock(dataDir: string, options: AcquireDataDirLockOptions = {}): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE_NAME);
  const waitMs = options.waitMs ?? PREVIOUS_SERVER_WAIT_MS;
  const token = randomBytes(8).toString('hex');
  const [preferred, ...fallbacks] = statusSocketPaths(dataDir, token);
  let status: StatusSocket;
  try {
    status = await listenStatusSocket(preferred);
  } catch (error) {
    if (fallbacks.length === 0 || errorCode(error) === 'EADDRINUSE') throw error;
    status = await listenStatusSocket(fallbacks[0]);
  }
  const content: LockContent = { pid: process.pid, token, startedAt: new Date().toISOString(), socket: status.path };
  const text = `${JSON.stringify(content)}\n`;
  const deadline = Date.now() + waitMs;
  let announced = false;
  let takeovers = 0;
  try {
    for (;;) {
      if (await publishLock(path, text, token)) break;
      const existingText = await readText(path);
      if (existingText === null) continue; // released meanwhile
      const existing = parseLock(existingText);
      const verdict: Verdict = existing ? await inspectHolder(existing) : { kind: 'dead' };
      if (verdict.kind === 'dead') {
        if (++takeovers > 10) throw new Error(`Could not acquire the data directory lock ${path}`);
        await removeStaleLock(path, existingText, token);
        continue;
      }
      const pid = existing?.pid ?? 0;
      if (verdict.kind === 'alive' && verdict.state === 'running') throw new DataDirLockedError(dataDir, pid);
      if (Date.now() >= deadline) throw new DataDirLockedError(dataDir, pid, true);
      if (!announced && verdict.kind === 'alive') {
        announced = true;
        options.onWaiting?.(pid);
      }
      await sleep(POLL_INTERVAL_MS);
    }
  } catch (error) {
    await status.close();
    throw error;
  }

  let released = false;
  const ownsLockFile = (current: string | null) => current !== null && parseLock(current)?.token === token;
  return {
    path,
    socketPath: status.path,
    markStopping: () => {
      status.state = 'stopping';
    },
    // The lock file goes first, while the socket still answers: nobody can take it for stale in between.
    release: async () => {
      if (released) return;
      released = true;
      try {
        if (ownsLockFile(await readText(path).catch(() => null))) await fs.rm(path, { force: true });
      } finally {
        await status.close();
      }
    },
    releaseSync: () => {
      if (released) return;
      released = true;
      try {
        let current: string | null = null;
        try {
          current = readFileSync(path, 'utf8');
        } catch {
          // no lock file
        }
        if (ownsLockFile(current)) unlinkSync(path);
      } catch {
        // best effort: the closed socket already tells the next start that this holder is gone
      } finally {
        status.closeSync();
      }
    },
  };
}
