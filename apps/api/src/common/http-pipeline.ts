import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { AppConfig } from '../config/app-config';
import {
  bearerToken,
  clientKey,
  cookieValues,
  isAllowedHost,
  isAllowedOrigin,
  isCorsOrigin,
  isOpenApiRequest,
  sessionCookieName,
  type TokenCheck,
  type TokenVerifier,
  type TrustedProxies,
} from './http-security';
import { logIds, runRequestWithLogContext } from './log-context';
import { formatEvent } from './log-format';
import { buildProblem, sendProblem, toProblemInit, UNHANDLED_ERROR_TYPE } from './problem-details.filter';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';
import { isApiOrGatewayPath, isOpenAiCompatPath } from './request-path';
import { OpenAiError, sendOpenAiError, toOpenAiError, typeForStatus } from './openai-error';

/**
 * Largest JSON / form body accepted on REST (skill create carries support files); bigger bodies answer 413. JSON bodies
 * are also limited to MAX_JSON_DEPTH levels of nesting (json-limits.ts; 400).
 */
export const REQUEST_BODY_LIMIT = '10mb';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Response locals key: the route label when a non-Nest handler (e.g. the console) answered. */
export const ROUTE_LABEL = 'cashcodeRouteLabel';

/** Response locals key: a `/v1` request (the OpenAI-compatible endpoint) that its own edge authenticated. */
export const OPENAI_COMPAT_HANDLED = 'cashcodeOpenAiCompat';

function problem(res: Response, req: Request, status: number, detail: string): void {
  if (isOpenAiCompatPath(req.path)) {
    // `/v1` answers in the OpenAI error format only
    sendOpenAiError(res, new OpenAiError(status, typeForStatus(status), status === 403 ? 'forbidden' : 'request_refused', detail));
    return;
  }
  sendProblem(res, buildProblem({ status, detail }, req, String(res.getHeader(REQUEST_ID_HEADER) ?? '')));
}

/** The express route template (`/api/sessions/:chatId` → `/api/sessions/{chatId}`), never the raw path. */
function routeTemplate(req: Request, res: Response): string {
  const label: unknown = res.locals[ROUTE_LABEL];
  if (typeof label === 'string') return label;
  const route: unknown = (req as Request & { route?: { path?: unknown } }).route?.path;
  if (typeof route !== 'string') return '<unmatched>';
  return route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Request id on every response + the async log context + one access-log line per request. */
export function requestContextMiddleware(logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = newRequestId();
    const started = process.hrtime.bigint();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const fields = {
        method: req.method,
        route: routeTemplate(req, res),
        status: res.statusCode,
        duration_ms: Math.round(durationMs * 100) / 100,
      };
      const errorType: unknown = res.locals[UNHANDLED_ERROR_TYPE];
      if (typeof errorType === 'string') {
        logger.error(formatEvent('http.request.failed', { ...fields, error_type: errorType }), logIds({ requestId }));
      } else {
        logger.log(formatEvent('http.request.completed', fields), logIds({ requestId }));
      }
    });
    runRequestWithLogContext(requestId, (onEnd) => res.once('close', onEnd), () => next());
  };
}

/** DNS-rebinding guard: 403 before routing for a Host outside the allowlist. */
export function hostCheckMiddleware(config: AppConfig): RequestHandler {
  return (req, res, next) => {
    if (!isAllowedHost(req.headers.host, config)) {
      problem(res, req, 403, 'Host is not allowed');
      return;
    }
    next();
  };
}

/** Cross-site request guard: state-changing calls from a browser must come from an allowed Origin. */
export function originCheckMiddleware(config: AppConfig): RequestHandler {
  return (req, res, next) => {
    // `/v1` carries its own bearer key and no ambient credential: any Origin may use it (openai-compat-edge.ts)
    if (res.locals[OPENAI_COMPAT_HANDLED] === true) return next();
    if (STATE_CHANGING.has(req.method) && !isAllowedOrigin(req.headers.origin, config, req.headers.host)) {
      problem(res, req, 403, 'Origin is not allowed');
      return;
    }
    next();
  };
}

/** Response locals key: set once the request passed the token guard (valid token, or an open route). */
const AUTHENTICATED = 'cashcodeAuthenticated';

/**
 * Answers a request that lacks a valid token: 429 with Retry-After when its client is over the failure limit, else
 * 401 (`WWW-Authenticate: Bearer`), one body for a missing and a wrong token.
 */
function refuse(res: Response, req: Request, verifier: TokenVerifier, key: string, result: TokenCheck): void {
  if (result === 'throttled') {
    res.setHeader('Retry-After', String(verifier.retryAfterSeconds(key)));
    problem(res, req, 429, 'Too many failed authentication attempts; try again later');
    return;
  }
  res.setHeader('WWW-Authenticate', 'Bearer');
  problem(res, req, 401, 'Authentication required: a valid API token is missing');
}

/** The request's credential, checked: the bearer token or the console's session cookie. */
function authenticate(req: Request, verifier: TokenVerifier, key: string, config: Pick<AppConfig, 'port'>): TokenCheck {
  const session = cookieValues(req.headers.cookie, sessionCookieName(config.port));
  return verifier.authenticate(bearerToken(req.headers.authorization), session, key);
}

/**
 * Token guard, first stage (before body parsing, the console and the routes); on unless CASHCODE_AUTH=off. Every
 * request needs `Authorization: Bearer <token>` or the console's session cookie except the explicit allowlist (isOpenApiRequest: exact routed
 * spellings of health, client config and the OpenAPI pages). A page or asset request (GET/HEAD) outside every
 * spelling of `/api` and `/ws` may still be answered by the console without a token: it is passed on unauthenticated,
 * and tokenGateMiddleware, installed after the console, refuses it if the console did not answer it. Every other
 * request without a valid token is refused here, so no route — known, unknown or spelled oddly — answers without one.
 */
export function tokenMiddleware(verifier: TokenVerifier, trusted: TrustedProxies, config: Pick<AppConfig, 'port'>): RequestHandler {
  return (req, res, next) => {
    if (!verifier.enabled || isOpenApiRequest(req.method, req.path) || res.locals[OPENAI_COMPAT_HANDLED] === true) {
      res.locals[AUTHENTICATED] = true;
      return next();
    }
    const presented = bearerToken(req.headers.authorization);
    if (presented === undefined && (req.method === 'GET' || req.method === 'HEAD') && !isApiOrGatewayPath(req.path)) {
      return next();
    }
    const key = clientKey(req, trusted);
    const result = authenticate(req, verifier, key, config);
    if (result === 'ok') {
      res.locals[AUTHENTICATED] = true;
      return next();
    }
    refuse(res, req, verifier, key, result);
  };
}

/**
 * Token guard, second stage: installed after the console and before the routes; refuses a request the first stage
 * passed on for the console when the console did not answer it (an unknown path gets 401, not a 404 that tells
 * which routes exist).
 */
export function tokenGateMiddleware(verifier: TokenVerifier, trusted: TrustedProxies, config: Pick<AppConfig, 'port'>): RequestHandler {
  return (req, res, next) => {
    if (!verifier.enabled || res.locals[AUTHENTICATED] === true) return next();
    const key = clientKey(req, trusted);
    const result = authenticate(req, verifier, key, config);
    if (result === 'ok') {
      res.locals[AUTHENTICATED] = true;
      return next();
    }
    refuse(res, req, verifier, key, result);
  };
}

/**
 * Express error handler for errors raised before Nest routing (body parser, static files). Client errors (body-parser's
 * `expose: true` 4xx: malformed, too large, too deep, bad charset) answer the same problem+json as inside Nest; anything
 * else is a logged, generic 500.
 */
export function earlyErrorHandler(): (error: unknown, req: Request, res: Response, next: NextFunction) => void {
  return (error, req, res, _next) => {
    if (isOpenAiCompatPath(req.path)) {
      const openAi = toOpenAiError(error);
      if (openAi.status >= 500) {
        res.locals[UNHANDLED_ERROR_TYPE] = error instanceof Error ? error.constructor.name : typeof error;
        new Logger('HttpPipeline').error(error instanceof Error ? error : 'Unhandled error before routing');
      }
      sendOpenAiError(res, openAi);
      return;
    }
    const init = toProblemInit(error);
    if (init && init.status >= 400 && init.status < 500) {
      sendProblem(res, buildProblem(init, req, String(res.getHeader(REQUEST_ID_HEADER) ?? '')));
      return;
    }
    res.locals[UNHANDLED_ERROR_TYPE] = error instanceof Error ? error.constructor.name : typeof error;
    new Logger('HttpPipeline').error(error instanceof Error ? error : 'Unhandled error before routing');
    problem(res, req, 500, 'Internal Server Error');
  };
}

/** ws:// sources the console may connect to (the gateway on its own port, any loopback or allowed host). */
function websocketSources(config: AppConfig): string[] {
  // CSP host-sources cannot name IPv6 literals; a console on [::1] uses the shared /ws endpoint ('self').
  const hosts = ['127.0.0.1', 'localhost', ...config.allowedHosts.map((h) => h.replace(/:\d+$/, ''))].filter(
    (host) => /^[a-z0-9.-]+$/i.test(host),
  );
  return [...new Set(hosts)].flatMap((host) => [`ws://${host}:*`, `wss://${host}:*`]);
}

/** helmet defaults with a CSP that lets the console run and blocks remote images (markdown-image exfiltration). */
export function securityHeadersMiddleware(config: AppConfig): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        scriptSrc: ["'self'"],
        // Angular and Angular Material set inline styles; no remote stylesheets.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", ...websocketSources(config)],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        workerSrc: ["'self'", 'blob:'],
        manifestSrc: ["'self'"],
      },
    },
    // The console is plain http on loopback: no HSTS / upgrade-insecure-requests.
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  });
}

/**
 * Installs the cross-cutting HTTP pipeline on the Express instance, in order: request id + access log, Host
 * allowlist, security headers, the `/v1` edge (the OpenAI-compatible endpoint), CORS allowlist, Origin check, token guard (its second stage, tokenGateMiddleware, goes
 * after the console), the console's sign-in routes (console-sign-in.ts). Must run before `app.init()`.
 */
export function installHttpPipeline(
  app: INestApplication,
  config: AppConfig,
  verifier: TokenVerifier,
  trusted: TrustedProxies,
  openAiCompatEdge?: RequestHandler,
  signIn?: RequestHandler,
): void {
  const logger = new Logger('HttpAccess');
  app.use(requestContextMiddleware(logger));
  app.use(hostCheckMiddleware(config));
  app.use(securityHeadersMiddleware(config));
  // `/v1`: its own CORS, on/off switch and bearer keys, before the REST CORS, Origin and token guards
  if (openAiCompatEdge) app.use(openAiCompatEdge);
  app.enableCors({
    // Only explicit allowlist entries are echoed (never an arbitrary origin).
    origin: (origin: string | undefined, callback: (error: Error | null, allow?: boolean) => void) =>
      callback(null, origin !== undefined && isCorsOrigin(origin, config)),
    credentials: true,
    methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
    exposedHeaders: [REQUEST_ID_HEADER],
    optionsSuccessStatus: 200,
    maxAge: 600,
  });
  app.use(originCheckMiddleware(config));
  app.use(tokenMiddleware(verifier, trusted, config));
  if (signIn) app.use(signIn);
}
