import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DynamicModule, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createCashcodeApp } from '../../src/bootstrap';
import { AppLogger } from '../../src/common/app-logger';
import { type AppConfig, loadConfig } from '../../src/config/app-config';

/** Repository root (apps/api/test/support → ../../../..). */
export const REPO_ROOT = resolve(__dirname, '..', '..', '..', '..');

export interface StartTestAppOptions {
  /**
   * extra environment for loadConfig (e.g. { CASHCODE_API_TOKEN: '…' }); nothing is read from process.env. Set
   * `CASHCODE_AUTH: 'on'` (or a CASHCODE_API_TOKEN) for the server's real default, where every call needs a credential.
   */
  env?: Record<string, string>;
  /** applied over the loaded config (e.g. { wsSharesHttp: false } for the gateway on its own port 0) */
  configOverrides?: Partial<AppConfig>;
  /** reuse an existing data dir (e.g. a restart test); it is then NOT deleted by close() */
  dataDir?: string;
  /** reuse an existing config dir (LLM settings) — e.g. a restart test; then NOT deleted by close() */
  configDir?: string;
  /** a root module other than AppModule.forRoot(config) (platform tests only) */
  module?: (config: AppConfig) => DynamicModule | Type<unknown>;
  /** echo log lines to the console (default false; the log file under <dataDir>/logs is always written) */
  consoleLog?: boolean;
}

export interface TestApp {
  /** http://127.0.0.1:<port> */
  httpUrl: string;
  /** ws://127.0.0.1:<port>/ws (shared HTTP server, the default) or ws://127.0.0.1:<wsPort>/ (own port) */
  wsUrl: string;
  /** the server's API token (CASHCODE_API_TOKEN or the generated one); null under CASHCODE_AUTH=off */
  apiToken: string | null;
  /** this start's one-time sign-in link; null under CASHCODE_AUTH=off */
  signInUrl: string | null;
  config: AppConfig;
  dataDir: string;
  configDir: string;
  app: NestExpressApplication;
  /** closes the app, releases the data-dir lock and removes the temp dirs it created (idempotent) */
  close(): Promise<void>;
}

/**
 * Starts a real CashCode app for e2e tests: fresh temp data + config dirs (fs.mkdtemp under os.tmpdir()), HTTP on
 * 127.0.0.1 port 0 and, by default, the WebSocket gateway sharing the HTTP server at `/ws` (WS_PORT = CASHCODE_PORT = 0).
 * Pass `configOverrides: { wsSharesHttp: false }` to run the gateway on its own port 0 instead. The console is not
 * served unless `env.CASHCODE_CONSOLE_DIR` points at a build. After start, `config.port`/`config.wsPort` hold the real
 * ports.
 *
 * Authentication: a suite that is not about it runs with CASHCODE_AUTH=off, so that its requests and sockets need no
 * credential (the harness's explicit choice, never the server's default). A suite that sets CASHCODE_AUTH or
 * CASHCODE_API_TOKEN gets exactly what it asks for; `CASHCODE_AUTH: 'on'` is the real default (a generated token in
 * `<configDir>/settings/api-token`, exposed as `apiToken`, and a sign-in link as `signInUrl`).
 */
export async function startTestApp(options: StartTestAppOptions = {}): Promise<TestApp> {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await fs.mkdtemp(join(tmpdir(), 'cashcode-data-')));
  const ownConfigDir = options.configDir === undefined;
  const configDir = options.configDir ?? (await fs.mkdtemp(join(tmpdir(), 'cashcode-config-')));
  const env: Record<string, string> = {
    CASHCODE_HOST: '127.0.0.1',
    CASHCODE_PORT: '0',
    WS_PORT: '0',
    CASHCODE_DATA_DIR: dataDir,
    CASHCODE_CONFIG_DIR: configDir,
    CASHCODE_CONSOLE_DIR: join(dataDir, '.no-console'),
    CASHCODE_CONSOLE_LOG_LEVEL: 'error',
    // model-written titles add a model call after a chat's first turn; the title tests turn them on
    CASHCODE_MODEL_TITLES: 'false',
    // suites about other things need no credential (see above); auth suites set CASHCODE_AUTH or CASHCODE_API_TOKEN
    ...(options.env?.['CASHCODE_AUTH'] === undefined && options.env?.['CASHCODE_API_TOKEN'] === undefined ? { CASHCODE_AUTH: 'off' } : {}),
    ...options.env,
  };
  const config: AppConfig = { ...loadConfig(env, REPO_ROOT), ...options.configOverrides };
  const logger = AppLogger.fromConfig(config, { console: options.consoleLog === true });
  const removeDirs = async () => {
    if (ownConfigDir) await fs.rm(configDir, { recursive: true, force: true });
    if (ownDataDir) await fs.rm(dataDir, { recursive: true, force: true });
  };
  let started;
  try {
    started = await createCashcodeApp(config, { logger, module: options.module?.(config) });
  } catch (error) {
    await logger.close();
    await removeDirs();
    throw error;
  }
  const server = started;
  let closing: Promise<void> | null = null;
  return {
    httpUrl: server.httpUrl,
    wsUrl: server.wsUrl,
    apiToken: server.config.apiToken,
    signInUrl: server.signInUrl,
    config: server.config,
    dataDir,
    configDir,
    app: server.app,
    close: () => {
      closing ??= (async () => {
        try {
          await server.close();
        } finally {
          await logger.close();
          await removeDirs();
        }
      })();
      return closing;
    },
  };
}
