/**
 * The server process (started by main.ts, from the compiled modules or from the bundle): optional .env, configuration,
 * the Nest app, and a clean stop on SIGINT / SIGTERM.
 */
import 'reflect-metadata';
import { config as loadDotenv } from 'dotenv';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExecSandboxStatus } from '@cashcode/contracts';
import type { CashcodeApp } from './bootstrap';
import { DataFormatError } from './backup/data-format';
import { ApiTokenFileError } from './common/api-token-file';
import { DataDirLockedError } from './common/data-dir-lock';
import { startIdleMemoryRelease } from './common/idle-memory-release';
import { ConfigError, loadConfig } from './config/app-config';

/** Emitted on `process` once the server listens. */
export const SERVER_STARTED_EVENT = 'cashcode:started';

/** A stop takes at most 2 s: what has not finished by then (a hung tool, an MCP server that ignores its stop) is cut off. */
const SHUTDOWN_FORCE_EXIT_MS = 1_500;

/** Repository root: apps/api/dist/server.js (or dist/server.bundle.js) → ../../.. */
const rootDir = resolve(__dirname, '..', '..', '..');

function fail(message: string): never {
  process.stderr.write(`cashcode: ${message}\n`);
  process.exit(1);
}

function describeStartupError(error: unknown): string {
  if (
    error instanceof ConfigError ||
    error instanceof DataDirLockedError ||
    error instanceof ApiTokenFileError ||
    error instanceof DataFormatError
  ) {
    return error.message;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const syscall = (error as NodeJS.ErrnoException | undefined)?.syscall;
  const info = error as { address?: unknown; port?: unknown } | undefined;
  const where = typeof info?.address === 'string' && typeof info.port === 'number' ? ` ${info.address}:${info.port}` : '';
  if (code === 'EADDRINUSE') {
    return `the address${where} is already in use (is another server running on CASHCODE_PORT or WS_PORT?)`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `the bind address${where} is not available on this machine (check CASHCODE_HOST / WS_HOST)`;
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return `permission denied${syscall ? ` (${syscall})` : ''}: check the ports and the data, config and log directories`;
  }
  return error instanceof Error ? `startup failed: ${error.name}: ${error.message}` : 'startup failed';
}

/**
 * What a first start needs to know, on stdout: where the console is and that the model settings are entered there (as
 * long as none are saved), and what missing bubblewrap means and how to fix it.
 */
async function startHints(server: CashcodeApp): Promise<string> {
  const lines: string[] = [];
  if (!existsSync(join(server.config.configDir, 'settings', 'llm.json'))) {
    lines.push(`cashcode: the console is at ${server.httpUrl}/ — enter the model settings there (Settings → LLM settings)`);
  }
  let sandbox: ExecSandboxStatus | null;
  try {
    const { ExecSandboxService } = await import('./agent/sandbox/exec-sandbox.service.js');
    sandbox = server.app.get(ExecSandboxService, { strict: false }).status();
  } catch {
    sandbox = null; // a root module without the sandbox
  }
  if (sandbox !== null && !sandbox.active && sandbox.mode === 'auto') {
    lines.push(
      `cashcode: exec runs UNCONFINED (${sandbox.reason ?? 'no sandbox'}): its approval cards say UNCONFINED; install ` +
        'bubblewrap (e.g. sudo apt-get install bubblewrap) and restart to confine commands',
    );
  }
  return lines.length > 0 ? `${lines.join('\n')}\n\n` : '';
}

async function main(): Promise<void> {
  // Owner-only by default for anything created by this process and its children (tools, MCP servers). The server's
  // own files do not rely on it: they are created with explicit modes (common/private-fs.ts).
  process.umask(0o077);
  const envFile = join(rootDir, '.env');
  // Optional .env at the repo root; variables already in the environment win.
  if (existsSync(envFile)) loadDotenv({ path: envFile, override: false, quiet: true });

  let config;
  try {
    config = loadConfig(process.env, rootDir);
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration: ${error.message}`);
    throw error;
  }

  let server: CashcodeApp;
  try {
    // Loaded after the configuration is valid, so that a bad value is reported without loading Nest.
    const { createCashcodeApp } = await import('./bootstrap.js');
    server = await createCashcodeApp(config);
  } catch (error) {
    fail(describeStartupError(error));
  }
  // the sign-in link on stdout whatever the console log level (the log has it too): the one step a first start needs
  if (server.signInUrl !== null) {
    process.stdout.write(
      `\ncashcode: open ${server.signInUrl} to sign the console in\n` +
        'cashcode: (the link works once, for 15 minutes; every start prints a new one)\n\n',
    );
  }
  process.stdout.write(await startHints(server));
  // main.ts writes the bundle's code cache once the server runs (see SERVER_STARTED_EVENT there)
  (process as NodeJS.EventEmitter).emit(SERVER_STARTED_EVENT);
  // a burst's memory goes back to the system once the server is idle again (common/idle-memory-release.ts)
  startIdleMemoryRelease();

  // SIGINT / SIGTERM: a clean stop (the data-dir lock is released on the way), or a forced exit when something still
  // hangs after SHUTDOWN_FORCE_EXIT_MS; then the lock is released synchronously. A repeated signal changes nothing.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const forced = setTimeout(() => {
      server.releaseLockSync();
      process.stderr.write(`cashcode: the shutdown did not finish within ${SHUTDOWN_FORCE_EXIT_MS} ms; exiting\n`);
      process.exit(1);
    }, SHUTDOWN_FORCE_EXIT_MS);
    forced.unref();
    server
      .close()
      .then(() => process.exit(signal === 'SIGINT' ? 130 : 0))
      .catch(() => {
        server.releaseLockSync();
        process.exit(1);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
