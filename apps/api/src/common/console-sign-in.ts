/**
 * The console's sign-in (SECURITY.md, "Authentication"). Each start prints a link with a one-time code
 * (`/api/auth/login?code=…`, see bootstrap.ts); opening it sets the session cookie and redirects to the console:
 *
 * - the code is random (256 bits), used once, and valid for SIGN_IN_CODE_TTL_MS; a new start prints a new one;
 * - a wrong, used or expired code answers 401 with a page (or problem+json for non-browser clients) that says what to
 *   do, and counts as a failed attempt of the client's failure throttle (429 with Retry-After once over the limit);
 * - the cookie is `cashcode_session_<http port>`: HttpOnly, SameSite=Strict, Path=/, Secure when the request came over
 *   https (TLS, a trusted proxy's `X-Forwarded-Proto: https`, or an https CASHCODE_PUBLIC_URL); its value is derived
 *   from the API token (http-security.ts), so it survives restarts and ends when the token changes;
 * - `POST /api/auth/logout` clears it; `GET /api/auth/session` tells a signed-in client how it is signed in (both sit
 *   behind the token guard: without a credential they answer 401 like every other route).
 */
import type { AuthSessionResponse } from '@cashcode/contracts';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { AppConfig } from '../config/app-config';
import { ROUTE_LABEL } from './http-pipeline';
import { clientKey, cookieValues, sessionCookieName, SIGN_IN_ROUTE, type TokenVerifier, type TrustedProxies } from './http-security';
import { buildProblem, sendProblem } from './problem-details.filter';
import { REQUEST_ID_HEADER } from './request-id';
import { matchesRoute } from './request-path';

export const SIGN_OUT_ROUTE = '/api/auth/logout';
export const SESSION_ROUTE = '/api/auth/session';

/** A sign-in code is valid this long after the start printed it. */
export const SIGN_IN_CODE_TTL_MS = 15 * 60_000;

/** The session cookie's lifetime in the browser (about 400 days, the longest browsers keep a cookie). */
const COOKIE_MAX_AGE_S = 400 * 24 * 3600;

export type RedeemResult = 'ok' | 'invalid' | 'used' | 'expired';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The start's one-time sign-in code: issued once per start, redeemed at most once, within its lifetime. */
export class SignInCodes {
  private current: { digest: Buffer; expiresAt: number; used: boolean } | null = null;

  constructor(
    private readonly ttlMs = SIGN_IN_CODE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new code (the previous one stops working). */
  issue(): string {
    const code = randomBytes(32).toString('base64url');
    this.current = { digest: digest(code), expiresAt: this.now() + this.ttlMs, used: false };
    return code;
  }

  redeem(code: string | undefined): RedeemResult {
    const current = this.current;
    if (current === null || code === undefined || code === '') return 'invalid';
    if (!timingSafeEqual(digest(code), current.digest)) return 'invalid';
    if (current.used) return 'used';
    if (this.now() >= current.expiresAt) return 'expired';
    current.used = true;
    return 'ok';
  }
}

/** True when the browser reached the server over https (directly or through a trusted proxy that says so). */
function overHttps(req: Request, config: Pick<AppConfig, 'publicUrl'>, trusted: TrustedProxies): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  if (config.publicUrl?.startsWith('https:')) return true;
  const peer = req.socket.remoteAddress;
  if (peer !== undefined && !trusted.empty && trusted.trusts(peer)) {
    const proto = req.headers['x-forwarded-proto'];
    const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
    return first === 'https';
  }
  return false;
}

function sessionCookie(name: string, value: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Where the console is: `/`, or the path of CASHCODE_PUBLIC_URL behind a proxy. */
function consolePath(config: Pick<AppConfig, 'publicUrl'>): string {
  if (config.publicUrl === null) return '/';
  const path = new URL(config.publicUrl).pathname;
  return path.endsWith('/') ? path : `${path}/`;
}

const FAILURE_TEXT: Record<Exclude<RedeemResult, 'ok'> | 'throttled', string> = {
  invalid: 'This sign-in link is not valid: the code is wrong, or it belongs to an earlier start of the server.',
  used: 'This sign-in link was already used: each link signs in one browser, once.',
  expired: 'This sign-in link has expired: a link is valid for 15 minutes after the server printed it.',
  throttled: 'Too many failed sign-in attempts from this address; wait a minute and try again.',
};

const WHAT_TO_DO =
  'Restart the server and open the new link it prints, or open the console and paste the API token ' +
  '(CASHCODE_API_TOKEN, or the file settings/api-token in the server\u2019s config directory).';

function failurePage(reason: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CashCode: not signed in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<h1>This browser is not signed in</h1>
<p>${reason}</p>
<p>${WHAT_TO_DO}</p>
<p><a href="/">Open the console</a></p>
</body></html>
`;
}

function refuseSignIn(req: Request, res: Response, status: 401 | 429, reason: string): void {
  res.setHeader('Cache-Control', 'no-store');
  const wantsPage = req.accepts(['application/json', 'application/problem+json', 'text/html']) === 'text/html';
  if (wantsPage) {
    res.status(status).type('html').send(failurePage(reason));
    return;
  }
  const requestId = String(res.getHeader(REQUEST_ID_HEADER) ?? '');
  sendProblem(res, buildProblem({ status, detail: `${reason} ${WHAT_TO_DO}`, code: 'sign_in_failed' }, req, requestId));
}

/**
 * The sign-in, sign-out and session routes. Installed after the token guard's first stage: the sign-in link is on its
 * allowlist (GET only), the other two need the token or the cookie like any route.
 */
export function consoleSignInMiddleware(
  config: Pick<AppConfig, 'port' | 'publicUrl'>,
  verifier: TokenVerifier,
  codes: SignInCodes,
  trusted: TrustedProxies,
): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' && matchesRoute(req.path, SIGN_IN_ROUTE)) {
      res.locals[ROUTE_LABEL] = SIGN_IN_ROUTE;
      const key = clientKey(req, trusted);
      const code = typeof req.query['code'] === 'string' ? req.query['code'] : undefined;
      const result = verifier.enabled ? codes.redeem(code) : 'ok';
      if (result !== 'ok') {
        // the right code is always accepted; wrong, used and expired ones count as failures
        if (verifier.throttled(key)) {
          res.setHeader('Retry-After', String(verifier.retryAfterSeconds(key)));
          return refuseSignIn(req, res, 429, FAILURE_TEXT.throttled);
        }
        verifier.recordFailure(key);
        return refuseSignIn(req, res, 401, FAILURE_TEXT[result]);
      }
      const value = verifier.sessionValue;
      if (value !== null) {
        res.setHeader('Set-Cookie', sessionCookie(sessionCookieName(config.port), value, COOKIE_MAX_AGE_S, overHttps(req, config, trusted)));
      }
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, consolePath(config));
      return;
    }
    if (req.method === 'POST' && matchesRoute(req.path, SIGN_OUT_ROUTE)) {
      res.locals[ROUTE_LABEL] = SIGN_OUT_ROUTE;
      res.setHeader('Set-Cookie', sessionCookie(sessionCookieName(config.port), '', 0, overHttps(req, config, trusted)));
      res.status(204).end();
      return;
    }
    if ((req.method === 'GET' || req.method === 'HEAD') && matchesRoute(req.path, SESSION_ROUTE)) {
      res.locals[ROUTE_LABEL] = SESSION_ROUTE;
      const viaCookie = verifier.enabled && verifier.sessionMatches(cookieValues(req.headers.cookie, sessionCookieName(config.port)));
      res.setHeader('Cache-Control', 'no-store');
      const body: AuthSessionResponse = { signed_in: true, via: !verifier.enabled ? 'none' : viaCookie ? 'cookie' : 'token' };
      res.json(body);
      return;
    }
    next();
  };
}
