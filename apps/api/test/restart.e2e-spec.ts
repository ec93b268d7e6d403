import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import WebSocket from 'ws';
import { acquireDataDirLock, LOCK_FILE_NAME } from '../src/common/data-dir-lock';
import {
  ensureBuiltServer,
  killGroup,
  lockHolderPid,
  MAIN_JS,
  makeServerDirs,
  processExists,
  serverEnv,
  spawnServer,
  startedUrl,
  watch,
  type WatchedProcess,
} from './support/server-process';
import { FakeModelServer } from './support/fake-model-server';
import { ensureMcpServersBuilt, STDIO_SERVER_JS, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { REPO_ROOT } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

// Real server processes (built output), real signals, real lock files: generous limits for a loaded 2-core runner.
jest.setTimeout(90_000);

const onLinux = existsSync('/proc/self/stat');

/** The pids of a process's children (Linux). */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The state letter of /proc/<pid>/stat (R, S, Z, …), or null when the process is gone. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return null;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Restart on the same data directory (built server)', () => {
  let dirs: Awaited<ReturnType<typeof makeServerDirs>>;
  const running: WatchedProcess[] = [];
  const launch = (process: WatchedProcess) => {
    running.push(process);
    return process;
  };

  beforeAll(() => ensureBuiltServer(), 120_000);
  beforeEach(async () => {
    dirs = await makeServerDirs('cashcode-restart-');
  });
  afterEach(async () => {
    for (const process of running.splice(0)) await killGroup(process);
    await fs.rm(dirs.root, { recursive: true, force: true });
  });

  it('Scenario: a restart right after kill -9 starts', async () => {
    const first = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(first)).get('/api/health').expect(200);
    process.kill(first.child.pid!, 'SIGKILL');
    // no waiting for the kill to be reaped: the next start must not depend on it
    const second = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(second)).get('/api/health').expect(200);
    expect(await lockHolderPid(dirs.dataDir)).toBe(second.child.pid);
    expect((await first.exited).signal).toBe('SIGKILL');
  });

  (onLinux ? it : it.skip)('Scenario: a lock held by a killed server that stays a zombie is taken over', async () => {
    // `sh` starts the server in the background, then becomes `sleep`, which never reaps it: once killed, the server
    // stays a zombie whose pid still answers kill(pid, 0)
    const parent = launch(
      watch(
        spawn('sh', ['-c', '"$0" "$1" & echo "server-pid=$!" >&2; exec sleep 300', process.execPath, MAIN_JS], {
          cwd: REPO_ROOT,
          env: serverEnv(dirs),
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        }),
      ),
    );
    const pid = Number((await parent.waitFor(/server-pid=(\d+)/))[1]);
    await request(await startedUrl(parent)).get('/api/health').expect(200);
    expect(await lockHolderPid(dirs.dataDir)).toBe(pid);
    // once the shell has become `sleep`, nothing reaps the server any more
    await until(() => readFileSync(`/proc/${parent.child.pid}/comm`, 'utf8').trim() === 'sleep', 'the shell to exec sleep');
    process.kill(pid, 'SIGKILL');
    await until(() => procState(pid) === 'Z', `pid ${pid} to become a zombie`);
    expect(processExists(pid)).toBe(true);
    expect(existsSync(join(dirs.dataDir, LOCK_FILE_NAME))).toBe(true);

    const next = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(next)).get('/api/health').expect(200);
    expect(await lockHolderPid(dirs.dataDir)).toBe(next.child.pid);
    expect(procState(pid)).toBe('Z');
  });

  it('Scenario: SIGTERM to the `npm run serve` process group returns only after the server stopped, within 2 s', async () => {
    const npm = launch(
      watch(
        spawn('npm', ['run', 'serve'], {
          cwd: REPO_ROOT,
          env: serverEnv(dirs),
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        }),
      ),
    );
    const httpUrl = await startedUrl(npm);
    await request(httpUrl).get('/api/health').expect(200);
    const serverPid = await lockHolderPid(dirs.dataDir);
    // an open WebSocket client must not hold the shutdown up
    const port = new URL(httpUrl).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { origin: httpUrl });
    await new Promise((resolve, reject) => {
      ws.once('message', resolve);
      ws.once('error', reject);
    });
    ws.on('error', () => undefined);

    process.kill(-npm.child.pid!, 'SIGTERM');
    const exit = await npm.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // npm returned only after its server had exited (and was reaped)
    expect(processExists(serverPid)).toBe(false);
    expect(existsSync(join(dirs.dataDir, LOCK_FILE_NAME))).toBe(false);
    const stopped = /event=server\.stopped duration_ms=(\d+)/.exec(npm.output());
    expect(stopped).not.toBeNull();
    expect(Number(stopped![1])).toBeLessThanOrEqual(2_000);
    expect(npm.output()).not.toMatch(/did not finish/);

    const next = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(next)).get('/api/health').expect(200);
  });

  it('Scenario: a second live server on the same data dir is refused at once with the clear error', async () => {
    const first = launch(spawnServer(serverEnv(dirs)));
    const httpUrl = await startedUrl(first);
    const second = launch(spawnServer(serverEnv(dirs)));
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.output()).toMatch(
      new RegExp(`^cashcode: Another CashCode server \\(pid ${first.child.pid}\\) is already using the data directory `, 'm'),
    );
    expect(second.output()).not.toMatch(/Waiting for the previous/);
    await request(httpUrl).get('/api/health').expect(200);
    expect(await lockHolderPid(dirs.dataDir)).toBe(first.child.pid);
  });

  it('Scenario: a start while the previous holder is shutting down waits for it, then starts', async () => {
    await fs.mkdir(dirs.dataDir, { recursive: true });
    // the previous holder is this test process, held in its `stopping` state for as long as the test wants
    const previous = await acquireDataDirLock(dirs.dataDir);
    previous.markStopping();
    let released = false;
    try {
      const next = launch(spawnServer(serverEnv(dirs)));
      await next.waitFor(
        new RegExp(`cashcode: Waiting for the previous CashCode server \\(pid ${process.pid}\\) to finish shutting down…\\n`),
      );
      expect(next.child.exitCode).toBeNull();
      expect(next.output()).not.toMatch(/event=server\.started/);
      await previous.release();
      released = true;
      await request(await startedUrl(next)).get('/api/health').expect(200);
      expect(await lockHolderPid(dirs.dataDir)).toBe(next.child.pid);
      expect(next.output().match(/Waiting for the previous/g)).toHaveLength(1);
    } finally {
      if (!released) await previous.release();
    }
  });

  it('Scenario: a start issued right after SIGTERM to the previous server starts', async () => {
    const first = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(first)).get('/api/health').expect(200);
    process.kill(first.child.pid!, 'SIGTERM');
    // whether it finds the previous server still stopping (and waits) or already gone, the start succeeds
    const next = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(next)).get('/api/health').expect(200);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(await lockHolderPid(dirs.dataDir)).toBe(next.child.pid);
  });

  (onLinux ? it : it.skip)(
    'Scenario: SIGTERM during a running turn with a stdio MCP server connected stops within 2 s, leaving no child behind',
    async () => {
      ensureMcpServersBuilt();
      const fake = await FakeModelServer.start();
      let client: WsTestClient | undefined;
      try {
        const catalog = writeCatalog(join(dirs.root, 'catalog'), { hello: stdioEntry() });
        const server = launch(spawnServer(serverEnv(dirs, { CASHCODE_MCP_CATALOG: catalog })));
        const httpUrl = await startedUrl(server);
        await configureFakeModel(httpUrl, fake.baseUrl);
        const connected = await request(httpUrl).post('/api/mcp/servers/hello/connect').expect(200);
        expect(connected.body.status).toBe('connected');
        const children = childPids(server.child.pid!);
        expect(children.length).toBeGreaterThan(0);
        // a turn whose model call never answers
        fake.enqueue({ hang: true });
        client = await WsTestClient.connect(`ws://127.0.0.1:${new URL(httpUrl).port}/ws`, { origin: httpUrl });
        client.sendMessage(client.chatId, 'hello');
        await fake.waitForRequests(1);

        process.kill(server.child.pid!, 'SIGTERM');
        expect(await server.exited).toEqual({ code: 0, signal: null });
        const stopped = /event=server\.stopped duration_ms=(\d+)/.exec(server.output());
        expect(stopped).not.toBeNull();
        expect(Number(stopped![1])).toBeLessThanOrEqual(2_000);
        expect(server.output()).not.toMatch(/did not finish/);
        expect(existsSync(join(dirs.dataDir, LOCK_FILE_NAME))).toBe(false);
        // gone, or a zombie waiting for whatever reaps orphans here: either way it has exited
        for (const pid of children) await until(() => [null, 'Z'].includes(procState(pid)), `MCP child ${pid} to exit`);
      } finally {
        await client?.close().catch(() => undefined);
        await fake.close();
      }
    },
  );

  (onLinux ? it : it.skip)('Scenario: a shutdown that hangs is cut off within 2 s; the lock is released and a restart starts', async () => {
    ensureMcpServersBuilt();
    // an MCP server that never sees its stdin end and ignores SIGTERM: closing it takes 2 s + 2 s before SIGKILL
    const stubborn = {
      type: 'stdio',
      display_name: 'Stubborn',
      description: 'ignores stdin EOF and SIGTERM',
      command: 'sh',
      args: ['-c', `trap '' TERM; (cat; sleep 60) | node "$0"`, STDIO_SERVER_JS],
      env: { CASHCODE_MCP_TEST_TOOLS: '1' },
    };
    const catalog = writeCatalog(join(dirs.root, 'catalog'), { stubborn });
    const server = launch(spawnServer(serverEnv(dirs, { CASHCODE_MCP_CATALOG: catalog })));
    const httpUrl = await startedUrl(server);
    const connected = await request(httpUrl).post('/api/mcp/servers/stubborn/connect').expect(200);
    expect(connected.body.status).toBe('connected');
    const children = childPids(server.child.pid!);
    expect(children.length).toBeGreaterThan(0);

    process.kill(server.child.pid!, 'SIGTERM');
    expect(await server.exited).toEqual({ code: 1, signal: null });
    expect(server.output()).toMatch(/cashcode: the shutdown did not finish within 1500 ms; exiting/);
    expect(server.output()).not.toMatch(/event=server\.stopped/);
    expect(existsSync(join(dirs.dataDir, LOCK_FILE_NAME))).toBe(false);
    // the MCP server's whole process group was killed on the way out
    for (const pid of children) await until(() => [null, 'Z'].includes(procState(pid)), `MCP child ${pid} to exit`);

    const next = launch(spawnServer(serverEnv(dirs)));
    await request(await startedUrl(next)).get('/api/health').expect(200);
  });
});
