import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE_NAME = '.cashcode.lock';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`Another CashCode server (pid ${pid}) is already using the data directory ${dataDir}; stop it or set CASHCODE_DATA_DIR to another directory`);
    this.name = 'DataDirLockedError';
  }
}

interface LockContent {
  pid: number;
  token: string;
  startedAt: string;
}

/** Lock files held by this process (several apps may run in one test process, each on its own data dir). */
const heldLocks = new Set<string>();

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(path: string): Promise<LockContent | null> {
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(path, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as LockContent).pid === 'number') {
      return parsed as LockContent;
    }
    return null;
  } catch {
    return null;
  }
}

export interface DataDirLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * One server per data directory (SECURITY.md §7): creates `<dataDir>/.cashcode.lock` exclusively with this pid.
 * A lock held by a live process (or by another app in this process) refuses with DataDirLockedError; a lock left by a
 * dead process (or unreadable) is taken over.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE_NAME);
  const content: LockContent = { pid: process.pid, token: randomBytes(8).toString('hex'), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(path, `${JSON.stringify(content)}\n`, { flag: 'wx', mode: 0o644 });
      heldLocks.add(path);
      return {
        path,
        release: async () => {
          if (!heldLocks.delete(path)) return;
          const current = await readLock(path);
          if (current?.token === content.token) await fs.rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const existing = await readLock(path);
    if (existing) {
      const ours = existing.pid === process.pid;
      if ((ours && heldLocks.has(path)) || (!ours && isProcessAlive(existing.pid))) {
        throw new DataDirLockedError(dataDir, existing.pid);
      }
    }
    // Stale (dead pid, a leftover of this pid, or garbage): take it over.
    await fs.rm(path, { force: true });
  }
  throw new Error(`Could not acquire the data directory lock ${path}`);
}
