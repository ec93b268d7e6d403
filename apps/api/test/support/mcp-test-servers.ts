/**
 * Real MCP servers for the MCP e2e suites: the repo's test servers (mcp_servers/, compiled with `tsc -b` on first use)
 * and @modelcontextprotocol/server-everything as a third-party server. HTTP servers run as child processes on a free
 * port of 127.0.0.1; call `stop()` (or `kill()` to simulate a crash).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from './test-app';

export const MCP_SERVERS_DIR = join(REPO_ROOT, 'mcp_servers');
export const STDIO_SERVER_JS = join(MCP_SERVERS_DIR, 'test_stdio_mcp', 'dist', 'index.js');
export const SSE_SERVER_JS = join(MCP_SERVERS_DIR, 'test_sse_mcp', 'dist', 'index.js');
export const HTTP_SERVER_JS = join(MCP_SERVERS_DIR, 'test_http_mcp', 'dist', 'index.js');
export const EVERYTHING_JS = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

const PACKAGES = ['test_kit', 'test_stdio_mcp', 'test_sse_mcp', 'test_http_mcp'];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function upToDate(): boolean {
  return PACKAGES.every((pkg) => {
    const out = join(MCP_SERVERS_DIR, pkg, 'dist', 'index.js');
    return existsSync(out) && statSync(out).mtimeMs >= newestMtime(join(MCP_SERVERS_DIR, pkg, 'src'));
  });
}

/** Compiles mcp_servers/ unless dist is current (one builder at a time across Jest workers). */
export function ensureMcpServersBuilt(): void {
  if (upToDate()) return;
  const lock = join(MCP_SERVERS_DIR, '.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error('timed out waiting for the mcp_servers build lock');
      // a lock left by a killed run
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 60_000) rmdirSync(lock);
      execFileSync(process.execPath, ['-e', 'setTimeout(() => {}, 200)']);
      if (upToDate()) return;
    }
  }
  try {
    if (!upToDate()) {
      execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', MCP_SERVERS_DIR], { stdio: 'pipe' });
    }
  } finally {
    rmdirSync(lock);
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface RunningMcpServer {
  url: string;
  pid: number;
  /** SIGKILL (a crash) */
  kill(): void;
  /** SIGTERM and wait for the exit */
  stop(): Promise<void>;
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`server did not report ${pattern} in time: ${buffer}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = pattern.exec(buffer);
      if (match) {
        clearTimeout(timer);
        child.stderr?.off('data', onData);
        child.stdout?.off('data', onData);
        child.stderr?.resume();
        child.stdout?.resume();
        resolve(match);
      }
    };
    child.stderr?.on('data', onData);
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${buffer}`));
    });
  });
}

function running(child: ChildProcess, url: string): RunningMcpServer {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    url,
    pid: child.pid!,
    kill: () => {
      child.kill('SIGKILL');
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface HttpServerOptions {
  /** `Name=Value` headers the server requires on every request */
  requireHeaders?: string[];
  /** add the test tools (CASHCODE_MCP_TEST_TOOLS=1); default true */
  testTools?: boolean;
  extraTools?: number;
  /** a fixed port (e.g. to restart a server on the port it had); default any free port */
  port?: number;
}

/** Starts the repo's SSE (`sse`) or Streamable HTTP (`http`) test server on a free port. */
export async function startTestHttpServer(kind: 'sse' | 'http', options: HttpServerOptions = {}): Promise<RunningMcpServer> {
  ensureMcpServersBuilt();
  const args = [kind === 'sse' ? SSE_SERVER_JS : HTTP_SERVER_JS, '--port', String(options.port ?? 0)];
  for (const header of options.requireHeaders ?? []) args.push('--require-header', header);
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env['PATH'] ?? '',
      CASHCODE_MCP_TEST_TOOLS: options.testTools === false ? '0' : '1',
      CASHCODE_MCP_EXTRA_TOOLS: String(options.extraTools ?? 0),
    },
  });
  const match = await waitForLine(child, /listening on (\S+)/);
  return running(child, match[1]!);
}

/** Starts @modelcontextprotocol/server-everything over SSE on a free port. */
export async function startEverythingSse(): Promise<RunningMcpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_JS, 'sse'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port) },
  });
  await waitForLine(child, /running on port/i);
  return running(child, `http://127.0.0.1:${port}/sse`);
}

/** Writes a built-in catalog file (mcp_config.json format) and returns its path. */
export function writeCatalog(dir: string, entries: Record<string, Record<string, unknown>>): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'mcp_config.json');
  writeFileSync(path, `${JSON.stringify(entries, null, 2)}\n`);
  return path;
}

/** A stdio catalog entry for the repo's stdio test server with the test tools. */
export function stdioEntry(extraEnv: Record<string, string> = {}): Record<string, unknown> {
  return {
    type: 'stdio',
    display_name: 'Test stdio MCP',
    description: 'Test server over stdio',
    command: 'node',
    args: [STDIO_SERVER_JS],
    env: { CASHCODE_MCP_TEST_TOOLS: '1', ...extraEnv },
  };
}

export const MEMORY_JS = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
export const FILESYSTEM_JS = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** A stdio catalog entry for server-everything. */
export function everythingStdioEntry(): Record<string, unknown> {
  return {
    type: 'stdio',
    display_name: 'Everything',
    description: 'The MCP reference test server',
    command: 'node',
    args: [EVERYTHING_JS, 'stdio'],
  };
}

/** Whether a process is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
