/**
 * The HTTP edge of `/v1` (installed by the HTTP pipeline before CORS, the Origin check and the REST token guard):
 *
 * - Every spelling of a path under `/v1` is handled here and only answers in the OpenAI error format.
 * - CORS: any Origin may call `/v1` (`Access-Control-Allow-Origin: *`, never with credentials): the only credential is
 *   the bearer key, which a page cannot read or send unless its user gave it the key; no cookie or loopback trust
 *   applies. Preflights (`OPTIONS`) are answered here without a key.
 * - Off by default: while the endpoint is disabled in settings every `/v1` request answers 404 `endpoint_disabled`.
 * - A bearer token is always required, from loopback too (editors and browsers on the same machine reach it): a key
 *   created in the console, or the server's API token when one is set. Missing → 401; wrong → 401, counted per client
 *   (after 20 wrong keys in a minute that client gets 429 with Retry-After for wrong or missing keys until the minute
 *   ends; the right key is always accepted).
 * - Routes: `GET /v1/models`, `GET /v1/models/{model}`, `POST /v1/chat/completions`; any other path is a 404, another
 *   method on a known path a 405.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bearerToken, clientKey, type TokenVerifier, type TrustedProxies } from '../common/http-security';
import { OPENAI_COMPAT_HANDLED } from '../common/http-pipeline';
import { isOpenAiCompatPath, matchesRoute } from '../common/request-path';
import { OpenAiError, sendOpenAiError } from '../common/openai-error';
import { FailureThrottle } from '../common/failure-throttle';

/** What the edge needs to know: whether the endpoint is on, and which key a secret is. */
export interface OpenAiCompatAccess {
  readonly enabled: boolean;
  verify(presented: string): { id: string } | null;
}

type Route = { methods: readonly string[]; match: (path: string) => boolean };

const ROUTES: readonly Route[] = [
  { methods: ['GET', 'HEAD'], match: (path) => matchesRoute(path, '/v1/models') },
  { methods: ['GET', 'HEAD'], match: (path) => /^\/v1\/models\/[^/]+\/?$/.test(path) },
  { methods: ['POST'], match: (path) => matchesRoute(path, '/v1/chat/completions') },
];

function setCors(req: Request, res: Response): void {
  if (req.headers.origin === undefined) return;
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'X-Request-ID');
}

function answerPreflight(req: Request, res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
  const requested = req.headers['access-control-request-headers'];
  res.setHeader(
    'Access-Control-Allow-Headers',
    typeof requested === 'string' && /^[A-Za-z0-9_,\s-]{1,2000}$/.test(requested) ? requested : 'Authorization, Content-Type',
  );
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
}

const DISABLED = new OpenAiError(
  404,
  'invalid_request_error',
  'endpoint_disabled',
  'The OpenAI-compatible API of this CashCode server is turned off; enable it in Settings > OpenAI-compatible API.',
);

function unauthorized(message: string, code = 'invalid_api_key'): OpenAiError {
  return new OpenAiError(401, 'authentication_error', code, message, null, { 'WWW-Authenticate': 'Bearer' });
}

export function openAiCompatEdgeMiddleware(
  access: OpenAiCompatAccess,
  verifier: TokenVerifier,
  trusted: TrustedProxies,
  throttle = new FailureThrottle(),
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isOpenAiCompatPath(req.path)) return next();
    res.locals[OPENAI_COMPAT_HANDLED] = true;
    if (req.method === 'OPTIONS') return answerPreflight(req, res);
    setCors(req, res);
    if (!access.enabled) return sendOpenAiError(res, DISABLED);

    const presented = bearerToken(req.headers.authorization);
    const key = clientKey(req, trusted);
    // the right key is always accepted, so nobody can lock the owner out by failing on purpose
    const matched =
      presented !== undefined && (access.verify(presented) !== null || (verifier.enabled && verifier.check(presented, key) === 'ok'));
    if (!matched) {
      if (throttle.throttled(key)) {
        return sendOpenAiError(
          res,
          new OpenAiError(429, 'rate_limit_error', 'too_many_failed_attempts', 'Too many requests with a wrong API key; try again later.', null, {
            'Retry-After': String(throttle.retryAfterSeconds(key)),
          }),
        );
      }
      if (presented === undefined) {
        return sendOpenAiError(
          res,
          unauthorized(
            "You didn't provide an API key. Send a CashCode key (created in Settings > OpenAI-compatible API) as 'Authorization: Bearer <key>'.",
            'missing_api_key',
          ),
        );
      }
      throttle.fail(key);
      return sendOpenAiError(res, unauthorized('Incorrect API key provided. Create a key in Settings > OpenAI-compatible API.'));
    }

    const route = ROUTES.find((candidate) => candidate.match(req.path));
    if (!route) {
      return sendOpenAiError(
        res,
        new OpenAiError(404, 'invalid_request_error', 'unknown_url', `Unknown request URL: ${req.method} ${req.path.slice(0, 200)}.`),
      );
    }
    if (!route.methods.includes(req.method)) {
      res.setHeader('Allow', route.methods.join(', '));
      return sendOpenAiError(
        res,
        new OpenAiError(405, 'invalid_request_error', 'method_not_allowed', `${req.method} is not supported on ${req.path.slice(0, 200)}.`),
      );
    }
    next();
  };
}
