import { type DynamicModule, Logger, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication, type NestExpressBodyParserOptionsFor } from '@nestjs/platform-express';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module';
import { appVersion, refuseNewerFormat } from './backup/data-format';
import { prepareDataDir } from './backup/migrations';
import { AppLogger } from './common/app-logger';
import { resolveServerToken, type ServerToken } from './common/api-token-file';
import { CashcodeWsAdapter, WS_SHARED_PATH } from './common/cashcode-ws-adapter';
import { consoleSignInMiddleware, SIGN_IN_CODE_TTL_MS, SignInCodes } from './common/console-sign-in';
import { installConsole } from './common/console-static';
import { acquireDataDirLock, type DataDirLock } from './common/data-dir-lock';
import { earlyErrorHandler, installHttpPipeline, REQUEST_BODY_LIMIT, tokenGateMiddleware } from './common/http-pipeline';
import { SIGN_IN_ROUTE, TokenVerifier, TrustedProxies } from './common/http-security';
import { verifyJsonBodyDepth } from './common/json-limits';
import { formatEvent } from './common/log-format';
import { mkdirPrivate, type PrivateRootsResult, tightenPrivateRoots } from './common/private-fs';
import { setupOpenApi } from './common/openapi';
import { ProblemDetailsFilter } from './common/problem-details.filter';
import { registerSecretValue } from './common/redact';
import { createValidationPipe } from './common/validation';
import { type AppConfig, CONSOLE_DEV_PORT, isLoopbackHost } from './config/app-config';
import { SERVER_LISTENING_EVENT } from './events/app-events';
import { AppEventBus } from './events/event-bus';
import { openAiCompatEdgeMiddleware, type OpenAiCompatAccess } from './openai-compat/openai-compat-edge';
import { OpenAiCompatSettingsService } from './openai-compat/openai-compat-settings.service';

export interface CreateAppOptions {
  /** root module; defaults to `AppModule.forRoot(config)` */
  module?: DynamicModule | Type<unknown>;
  /** the app's LoggerService; defaults to the file + console logger built from config */
  logger?: AppLogger;
  /** skip the data-dir lock (never in production) */
  skipLock?: boolean;
}

export interface CashcodeApp {
  app: NestExpressApplication;
  /** the configuration, with ports 0 replaced by the bound ports and the console's real origins allowed */
  config: AppConfig;
  /** e.g. http://127.0.0.1:8000 */
  httpUrl: string;
  /** e.g. ws://127.0.0.1:8765/ or ws://127.0.0.1:8000/ws when the gateway shares the HTTP server */
  wsUrl: string;
  /**
   * this start's one-time sign-in link for the console (`…/api/auth/login?code=…`, console-sign-in.ts); null with
   * CASHCODE_AUTH=off
   */
  signInUrl: string | null;
  logger: AppLogger;
  /** Stops the app and releases the data-dir lock (idempotent). From its first call a new start waits for it. */
  close(): Promise<void>;
  /** For a forced exit: releases the data-dir lock synchronously, best effort (close() may still be running). */
  releaseLockSync(): void;
}

function urlHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === '0.0.0.0' || bare === '::') return '127.0.0.1';
  return bare.includes(':') ? `[${bare}]` : bare;
}

/** Adds the console's own origins at the real HTTP port (after port 0 was resolved). */
function allowOwnOrigins(config: AppConfig): void {
  const hosts = ['127.0.0.1', 'localhost', '[::1]'];
  for (const host of hosts) {
    const origin = `http://${host}:${config.port}`;
    if (!config.allowedOrigins.includes(origin)) config.allowedOrigins.push(origin);
  }
}

/**
 * The Express instance the app runs on. Routing is case-sensitive, so every route has one spelling (`/API/...` is not
 * `/api/...`); the router reads the setting once, when it is created, so it is set before Nest adds anything.
 */
function createExpressInstance(): express.Express {
  const instance = express();
  instance.set('case sensitive routing', true);
  return instance;
}

/** The first lines of the log: where the console, the API docs and the gateway are, and how to sign in. */
function startupBanner(config: AppConfig, httpUrl: string, wsUrl: string, consoleBuilt: boolean, signInUrl: string | null): string {
  const auth = signInUrl !== null ? `on · sign in: ${signInUrl}` : 'off (CASHCODE_AUTH=off)';
  const consoleText = consoleBuilt ? `${httpUrl}/` : `${httpUrl}/ (not built yet: run npm run build)`;
  return `CashCode is running: console ${consoleText} · API docs ${httpUrl}/api/docs · WebSocket ${wsUrl} · auth: ${auth}`;
}

/**
 * Where a browser opens the sign-in link: CASHCODE_PUBLIC_URL behind a proxy, the Angular dev server under
 * `npm run dev` (it forwards `/api`, and the cookie must belong to the console's host), else the server itself.
 */
function signInBase(config: AppConfig, httpUrl: string): string {
  if (config.publicUrl !== null) return config.publicUrl;
  if (config.consoleDev) return `http://localhost:${CONSOLE_DEV_PORT}`;
  return httpUrl;
}

/** Logs how this start authenticates: a new or replaced token file, or a warning that authentication is off. */
function logAuthentication(server: ServerToken | null, logger: AppLogger): void {
  if (server === null) {
    logger.warn(
      formatEvent('auth.disabled', {}) +
        ' — CASHCODE_AUTH=off: every account on this machine can use the API, the gateway and /metrics without a credential',
      'Bootstrap',
    );
  } else if (server.replaced) {
    logger.warn(
      formatEvent('auth.token.replaced', { path: server.file }) +
        ' — The API token file was readable by other users; a new token was created (sign in again with the link below)',
      'Bootstrap',
    );
  } else if (server.created) {
    logger.log(formatEvent('auth.token.created', { path: server.file }), 'Bootstrap');
  }
}

/** The `/v1` switch and keys: the settings service, or always off when the root module has no OpenAI-compatible API. */
function openAiCompatAccess(app: NestExpressApplication): OpenAiCompatAccess {
  try {
    return app.get(OpenAiCompatSettingsService, { strict: false });
  } catch {
    return { enabled: false, verify: () => null };
  }
}

/** Creates the runtime directories (data, memory, workspace, logs), owner-only (0700) when they are new. */
export async function createDataDirectories(config: AppConfig): Promise<void> {
  for (const dir of [config.dataDir, config.memoryDir, config.workspaceDir, config.logDir]) {
    await mkdirPrivate(dir);
  }
}

/**
 * Makes the data, memory, log and config directories owner-only (0700 / 0600): what an earlier version, a copy or the
 * user left readable to others is tightened. The workspace is the user's own folder and is never walked. Never throws:
 * failures are counted in the results, which the boot logs (one line per directory that needed changes).
 */
export function tightenDataPermissions(config: AppConfig): PrivateRootsResult[] {
  return tightenPrivateRoots([config.dataDir, config.memoryDir, config.logDir, config.configDir], [config.workspaceDir]);
}

function logTightened(results: PrivateRootsResult[], logger: AppLogger): void {
  for (const { root, changed, failed, truncated } of results) {
    if (changed > 0) {
      logger.log(
        formatEvent('fs.permissions.tightened', { root, paths: changed }) +
          ` — Tightened permissions of ${changed} paths under ${root} to owner-only`,
        'Bootstrap',
      );
    }
    if (failed > 0 || truncated) {
      logger.warn(
        formatEvent('fs.permissions.incomplete', { root, failed, truncated }) +
          ` — Some paths under ${root} may still be readable by other users; check their owner and mode`,
        'Bootstrap',
      );
    }
  }
}

/**
 * Boots CashCode: directories (owner-only; existing ones tightened), data-dir lock, logger, Nest app with the HTTP
 * pipeline (request id, access log, Host/Origin/token guards, helmet, CORS, body limits, problem+json errors,
 * validation), OpenAPI, the console,
 * the WebSocket adapter; then listens on config.host:config.port (and config.wsHost:config.wsPort unless shared).
 * Shared by main.ts and the tests (test/support/test-app.ts).
 */
export async function createCashcodeApp(config: AppConfig, options: CreateAppOptions = {}): Promise<CashcodeApp> {
  // a data directory written by a newer version is refused before anything in it is created or changed
  await refuseNewerFormat(config.dataDir);
  await createDataDirectories(config);
  // before the tightening: a token file that others could read is replaced, not just made private
  const serverToken = await resolveServerToken(config);
  const tightened = tightenDataPermissions(config);
  const lock: DataDirLock | null = options.skipLock
    ? null
    : await acquireDataDirLock(config.dataDir, {
        // before the logger exists (it writes into the data directory this start is waiting for)
        onWaiting: (pid) =>
          process.stderr.write(`cashcode: Waiting for the previous CashCode server (pid ${pid}) to finish shutting down…\n`),
      });
  let logger: AppLogger;
  const migrated: string[] = [];
  try {
    // the data format: a newer one is refused before anything reads it, an older one migrated (backup/migrations.ts)
    await prepareDataDir(config.dataDir, { writtenBy: appVersion(config.rootDir), log: (line) => migrated.push(line) });
    logger = options.logger ?? AppLogger.fromConfig(config);
  } catch (error) {
    await lock?.release();
    throw error;
  }
  for (const line of migrated) logger.log(formatEvent('data.migrated', { data_dir: config.dataDir }) + ` — ${line}`, 'Bootstrap');
  registerSecretValue(config.apiToken);
  logTightened(tightened, logger);
  logAuthentication(serverToken, logger);
  let app: NestExpressApplication | null = null;
  let adapter: CashcodeWsAdapter | null = null;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      options.module ?? AppModule.forRoot(config),
      new ExpressAdapter(createExpressInstance()),
      { logger, bodyParser: false, abortOnError: false },
    );
    const verifier = new TokenVerifier(config.apiToken);
    registerSecretValue(verifier.sessionValue);
    const trusted = new TrustedProxies(config.trustedProxies);
    const signInCodes = new SignInCodes();
    installHttpPipeline(
      app,
      config,
      verifier,
      trusted,
      openAiCompatEdgeMiddleware(openAiCompatAccess(app), verifier, trusted),
      consoleSignInMiddleware(config, verifier, signInCodes, trusted),
    );
    // Size limit (413) and nesting limit (400, checked on the raw bytes before JSON.parse) on every JSON body. Nest's
    // option type leaves out `verify` because its `rawBody` option uses it; this app never sets `rawBody`, so the hook
    // reaches body-parser unchanged.
    app.useBodyParser('json', {
      limit: REQUEST_BODY_LIMIT,
      verify: verifyJsonBodyDepth,
    } as NestExpressBodyParserOptionsFor<'json'>);
    app.useBodyParser('urlencoded', { limit: REQUEST_BODY_LIMIT, extended: false });
    app.use(earlyErrorHandler());
    const consoleBuilt = installConsole(app, config.consoleDir);
    app.use(tokenGateMiddleware(verifier, trusted, config));
    app.use(earlyErrorHandler());
    app.useGlobalFilters(new ProblemDetailsFilter());
    app.useGlobalPipes(createValidationPipe());
    adapter = new CashcodeWsAdapter(app, config, verifier, trusted);
    app.useWebSocketAdapter(adapter);
    setupOpenApi(app);

    await app.listen(config.port, config.host);
    const httpServer = app.getHttpServer() as Server;
    const httpAddress = httpServer.address() as AddressInfo;
    config.port = httpAddress.port;
    if (config.wsSharesHttp) config.wsPort = httpAddress.port;
    allowOwnOrigins(config);
    const wsAddress = await adapter.start(httpServer);
    if (wsAddress) config.wsPort = wsAddress.port;

    const bootLogger = new Logger('Bootstrap');
    const httpUrl = `http://${urlHost(config.host)}:${config.port}`;
    const wsUrl = config.wsSharesHttp
      ? `ws://${urlHost(config.host)}:${config.port}${WS_SHARED_PATH}`
      : `ws://${urlHost(config.wsHost)}:${config.wsPort}/`;
    for (const [name, host] of [
      ['HTTP', config.host],
      ['WebSocket', config.wsHost],
    ] as const) {
      if (!isLoopbackHost(host) && (name === 'HTTP' || !config.wsSharesHttp)) {
        bootLogger.warn(
          formatEvent('server.bind.non_loopback', { address: host, listener: name, token_required: true }) +
            ` — ${name} is reachable from other machines at ${host}; every API call needs the API token`,
        );
      }
    }
    // a new one-time code at every start; the link is in the log (owner-only) and on stdout (server.ts)
    const signInUrl = verifier.enabled ? `${signInBase(config, httpUrl)}${SIGN_IN_ROUTE}?code=${signInCodes.issue()}` : null;
    bootLogger.log(startupBanner(config, httpUrl, wsUrl, consoleBuilt, signInUrl));
    bootLogger.log(
      formatEvent('server.started', { http_url: httpUrl, ws_url: wsUrl, token_required: verifier.enabled }),
    );
    if (signInUrl !== null) {
      bootLogger.log(
        formatEvent('auth.sign_in_link', { url: signInUrl, valid_minutes: SIGN_IN_CODE_TTL_MS / 60_000 }) +
          ' — Open this link once to sign the console in (a new link is printed at every start)',
      );
    }
    // background work that must not delay the first health answer starts now (the session index sync, the warm-up)
    let bus: AppEventBus | null = null;
    try {
      bus = app.get(AppEventBus, { strict: false });
    } catch {
      bus = null; // a test module without the event bus
    }
    bus?.emit(SERVER_LISTENING_EVENT, {});

    const nestApp = app;
    const wsAdapter = adapter;
    let closing: Promise<void> | null = null;
    return {
      app: nestApp,
      config,
      httpUrl,
      wsUrl,
      signInUrl,
      logger,
      close: () => {
        closing ??= (async () => {
          const started = performance.now();
          // the status socket answers `stopping` from now on: a new start waits for this one instead of refusing
          lock?.markStopping();
          try {
            await nestApp.close();
            await wsAdapter.dispose();
          } finally {
            await lock?.release();
            bootLogger.log(formatEvent('server.stopped', { duration_ms: Math.round(performance.now() - started) }));
            if (!options.logger) await logger.close();
          }
        })();
        return closing;
      },
      releaseLockSync: () => lock?.releaseSync(),
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await adapter?.dispose().catch(() => undefined);
    await lock?.release();
    if (!options.logger) await logger.close();
    throw error;
  }
}
