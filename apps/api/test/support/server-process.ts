import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE_NAME } from '../../src/common/data-dir-lock';
import { REPO_ROOT } from './test-app';

/** The built server (`npm run build -w @cashcode/api`). */
export const MAIN_JS = join(REPO_ROOT, 'apps', 'api', 'dist', 'main.js');

/** Builds apps/api/dist when it is missing (a plain tsc build: main.js then runs the compiled modules). */
export function ensureBuiltServer(): void {
  if (existsSync(MAIN_JS)) return;
  const build = spawnSync('npx', ['tsc', '-p', 'apps/api/tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (build.status !== 0 || !existsSync(MAIN_JS)) throw new Error('could not build apps/api/dist/main.js');
}

/** A fresh temp directory holding `data/` and `config/` for spawned servers; remove it with fs.rm. */
export async function makeServerDirs(prefix = 'cashcode-proc-'): Promise<{ root: string; dataDir: string; configDir: string }> {
  const root = await fs.mkdtemp(join(tmpdir(), prefix));
  return { root, dataDir: join(root, 'data'), configDir: join(root, 'config') };
}

/**
 * The environment of a spawned server: nothing from the test's own environment but PATH and HOME. Like test-app.ts, a
 * suite that is not about authentication runs with CASHCODE_AUTH=off unless `extra` sets CASHCODE_AUTH or
 * CASHCODE_API_TOKEN (`CASHCODE_AUTH: 'on'` is the server's real default).
 */
export function serverEnv(dirs: { dataDir: string; configDir: string }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? tmpdir(),
    CASHCODE_DATA_DIR: dirs.dataDir,
    CASHCODE_CONFIG_DIR: dirs.configDir,
    CASHCODE_HOST: '127.0.0.1',
    CASHCODE_PORT: '0',
    WS_PORT: '0',
    CASHCODE_CONSOLE_DIR: join(dirs.dataDir, '.no-console'),
    CASHCODE_CONSOLE_LOG_LEVEL: 'INFO',
    // model-written titles add a model call after a chat's first turn
    CASHCODE_MODEL_TITLES: 'false',
    ...(extra['CASHCODE_AUTH'] === undefined && extra['CASHCODE_API_TOKEN'] === undefined ? { CASHCODE_AUTH: 'off' } : {}),
    ...extra,
  };
}

/** A spawned process whose stdout and stderr are collected. */
export interface WatchedProcess {
  child: ChildProcess;
  /** stdout + stderr so far */
  output(): string;
  /** resolves with the first match of `pattern` in the output; rejects when the process exits first */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** resolves once the process has exited (immediately when it already has) */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function watch(child: ChildProcess): WatchedProcess {
  let text = '';
  const waiters = new Set<() => void>();
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const changed = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const collect = (chunk: Buffer) => {
    text += chunk.toString();
    changed();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
      changed();
    });
  });
  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            waiters.delete(check);
            resolve(match);
          } else if (exit) {
            waiters.delete(check);
            reject(new Error(`the process exited (${exit.code ?? exit.signal}) before printing ${pattern}:\n${text}`));
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Spawns `node apps/api/dist/main.js` (in its own process group, so that a test can signal the whole group). */
export function spawnServer(env: Record<string, string>): WatchedProcess {
  return watch(spawn(process.execPath, [MAIN_JS], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
}

/** Waits for the `server.started` line and returns the HTTP URL it names. */
export async function startedUrl(server: WatchedProcess): Promise<string> {
  const match = await server.waitFor(/event=server\.started http_url="([^"]+)"/);
  return match[1];
}

/** The pid recorded in the data directory's lock file. */
export async function lockHolderPid(dataDir: string): Promise<number> {
  return (JSON.parse(await fs.readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')) as { pid: number }).pid;
}

/** True while `pid` names a process (a zombie included). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Kills a spawned process group (SIGKILL) and waits for its leader to exit; for cleanup after a test. */
export async function killGroup(server: WatchedProcess | undefined): Promise<void> {
  if (!server?.child.pid) return;
  try {
    process.kill(-server.child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  await server.exited;
}
