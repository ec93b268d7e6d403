import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { AppConfig } from '../config/app-config';
import { FailureThrottle } from './failure-throttle';
import { matchesRoute } from './request-path';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Splits a Host header value into a lowercase hostname (IPv6 kept in brackets) and an optional port. */
export function parseHostHeader(value: string | undefined): { hostname: string; port: string | null } | null {
  if (!value) return null;
  const host = value.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host);
  if (!match) return null;
  return { hostname: match[1].replace(/\.$/, ''), port: match[2] ?? null };
}

/**
 * DNS-rebinding guard: the Host header must name localhost, 127.0.0.1 or [::1] (any port), or an entry of
 * CASHCODE_ALLOWED_HOSTS (`name` matches any port, `name:port` only that port).
 */
export function isAllowedHost(hostHeader: string | undefined, config: Pick<AppConfig, 'allowedHosts'>): boolean {
  const parsed = parseHostHeader(hostHeader);
  if (!parsed) return false;
  if (LOOPBACK_NAMES.has(parsed.hostname)) return true;
  const full = parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  return config.allowedHosts.some((entry) => {
    const allowed = entry.toLowerCase().replace(/^https?:\/\//, '');
    return allowed === parsed.hostname || allowed === full;
  });
}

function normaliseOrigin(origin: string): string | null {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Origin allowlist: CASHCODE_ALLOWED_ORIGINS plus the console's own origins (config.allowedOrigins, which bootstrap
 * completes with the real HTTP port), or a same-origin request (Origin equals the allowlisted Host it was sent to).
 * An absent Origin (non-browser client) is allowed — Origin is not authentication. `null` and malformed origins are not.
 */
export function isAllowedOrigin(
  origin: string | undefined,
  config: Pick<AppConfig, 'allowedOrigins' | 'allowedHosts'>,
  hostHeader?: string,
): boolean {
  if (origin === undefined) return true;
  const normalised = normaliseOrigin(origin);
  if (!normalised) return false;
  if (config.allowedOrigins.some((allowed) => normaliseOrigin(allowed) === normalised)) return true;
  if (hostHeader && isAllowedHost(hostHeader, config)) {
    const sameOrigin = normaliseOrigin(`http://${hostHeader}`);
    const sameOriginTls = normaliseOrigin(`https://${hostHeader}`);
    return normalised === sameOrigin || normalised === sameOriginTls;
  }
  return false;
}

/** True for an Origin CORS may echo: an explicit allowlist entry only (never reflect an arbitrary origin). */
export function isCorsOrigin(origin: string, config: Pick<AppConfig, 'allowedOrigins'>): boolean {
  const normalised = normaliseOrigin(origin);
  return normalised !== null && config.allowedOrigins.some((allowed) => normaliseOrigin(allowed) === normalised);
}

export type TokenCheck = 'ok' | 'unauthorized' | 'throttled';

/** Failure records kept at most (expired ones are dropped first, then the oldest). */

/** The label the console's session cookie value is derived with (HMAC-SHA256 keyed by the token). */
const SESSION_LABEL = 'cashcode console session v1';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The credential check for REST, the WS handshake, `/metrics` and the console's sign-in: the API token
 * (`Authorization: Bearer`, or `?token=` on the WS handshake) or the console's session cookie, whose value is derived
 * from the token (HMAC-SHA256 of a fixed label keyed by the token): it survives restarts and stops working when the
 * token changes. Comparisons are constant-time over SHA-256 digests (no length leak). A per-client failure throttle:
 * only wrong tokens (and wrong sign-in codes) are counted; after `maxFailures` of them inside `windowMs` that client
 * gets 'throttled' for every further wrong or missing credential until the window ends. The right token and a valid
 * cookie are always accepted, so nobody can lock the user out by failing on purpose. Without a token (CASHCODE_AUTH=off)
 * every check passes.
 */
export class TokenVerifier {
  private readonly expectedDigest: Buffer | null;
  private readonly session: string | null;
  private readonly sessionDigest: Buffer | null;
  private readonly failures: FailureThrottle;

  constructor(token: string | null, maxFailures = 20, windowMs = 60_000, now: () => number = Date.now) {
    this.failures = new FailureThrottle(maxFailures, windowMs, now);
    this.expectedDigest = token === null ? null : sha256(token);
    this.session = token === null ? null : createHmac('sha256', token).update(SESSION_LABEL).digest('base64url');
    this.sessionDigest = this.session === null ? null : sha256(this.session);
  }

  get enabled(): boolean {
    return this.expectedDigest !== null;
  }

  /** The value of the console's session cookie (null without a token). */
  get sessionValue(): string | null {
    return this.session;
  }

  /** True when one of the presented cookie values is the session's. */
  sessionMatches(values: readonly string[]): boolean {
    const expected = this.sessionDigest;
    if (expected === null) return false;
    let ok = false;
    for (const value of values) ok = timingSafeEqual(sha256(value), expected) || ok;
    return ok;
  }

  /** Seconds until a throttled client may try again. */
  retryAfterSeconds(clientKey: string): number {
    return this.failures.retryAfterSeconds(clientKey);
  }

  /** True while the client is over the failure limit. */
  throttled(clientKey: string): boolean {
    return this.failures.throttled(clientKey);
  }

  /** Counts one failed attempt of the client (a wrong token or sign-in code). */
  recordFailure(clientKey: string): void {
    this.failures.fail(clientKey);
  }

  /** The token alone (the `/v1` edge, which takes no cookie). */
  check(presented: string | undefined | null, clientKey: string): TokenCheck {
    if (this.expectedDigest === null) return 'ok';
    const ok = presented !== undefined && presented !== null && timingSafeEqual(sha256(presented), this.expectedDigest);
    if (ok) return 'ok';
    if (this.throttled(clientKey)) return 'throttled';
    // A missing token is no guess at the token: refused, not counted.
    if (presented === undefined || presented === null) return 'unauthorized';
    this.recordFailure(clientKey);
    return 'unauthorized';
  }

  /**
   * The token or the session cookie: a valid cookie is enough (a stale token the browser still sends beside it does
   * not spoil it); otherwise the token is checked. A wrong or stale cookie is treated as no credential (not counted).
   */
  authenticate(presented: string | undefined, sessionValues: readonly string[], clientKey: string): TokenCheck {
    if (this.expectedDigest === null) return 'ok';
    if (sessionValues.length > 0 && this.sessionMatches(sessionValues)) return 'ok';
    return this.check(presented, clientKey);
  }
}

/** Name of the console's session cookie: one per HTTP port, since cookies are scoped by host and not by port. */
export function sessionCookieName(httpPort: number): string {
  return `cashcode_session_${httpPort}`;
}

/** Every value of cookie `name` in a Cookie header (a browser may send several of one name). */
export function cookieValues(header: string | string[] | undefined, name: string): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join('; ') : header;
  const values: string[] = [];
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value !== '' && values.length < 8) values.push(value);
  }
  return values;
}

/** Address ranges (parsed CASHCODE_TRUSTED_PROXIES entries) whose X-Forwarded-For is believed. */
export class TrustedProxies {
  private readonly ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

  /** `cidrs`: validated `address/bits` strings (see parseTrustedProxies in app-config). */
  constructor(cidrs: readonly string[]) {
    this.ranges = cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  trusts(address: string): boolean {
    const parsed = parseAddress(address);
    if (!parsed) return false;
    return this.ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  }
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.trim().replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return null;
  // IPv4-mapped IPv6 (`::ffff:10.0.0.1`, what a dual-stack socket reports) is the IPv4 address it carries
  return ipaddr.process(bare);
}

/**
 * The address a request comes from, for the failure throttle: the peer address, or — when the peer is a trusted
 * proxy — the right-most address of `X-Forwarded-For` that is not a trusted proxy (entries left of it were written by
 * the client and prove nothing). Without trusted proxies the header is ignored. IPv6 clients are keyed by their /64
 * network (one host usually holds a whole /64), IPv4-mapped addresses by their IPv4 address.
 */
export function clientKey(
  request: { socket: { remoteAddress?: string }; headers: Record<string, string | string[] | undefined> },
  trusted: TrustedProxies,
): string {
  let address = request.socket.remoteAddress ?? 'unknown';
  if (!trusted.empty && trusted.trusts(address)) {
    const header = request.headers['x-forwarded-for'];
    const chain = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    for (let i = chain.length - 1; i >= 0; i--) {
      address = chain[i];
      if (!trusted.trusts(address)) break;
    }
  }
  const parsed = parseAddress(address);
  if (!parsed) return `other:${address.slice(0, 64)}`;
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/** The OpenAPI pages: the Swagger UI, its assets and the JSON / YAML document. */
const DOCS_PATH = /^\/api\/docs(?:(?:-json|-yaml)\/?|\/?|\/(?:docs\/)?[A-Za-z0-9_-][A-Za-z0-9._-]*)$/;

/** Routes that need no token even when the server has one (OpenAPI documents them without a 401). */
export const TOKEN_EXEMPT_ROUTES = ['/api/health', '/api/client-config'] as const;

/** The console's sign-in link (`GET`, bound by its one-time code instead of the token; console-sign-in.ts). */
export const SIGN_IN_ROUTE = '/api/auth/login';

/**
 * The MCP OAuth callback: the browser arrives from the authorization server's redirect, which cannot carry the API
 * token; the request is bound instead by the sign-in's unguessable, single-use, short-lived `state` (SECURITY.md).
 * `GET` only, this exact path.
 */
export const OAUTH_CALLBACK_ROUTE = '/api/mcp/oauth/callback';

/**
 * The explicit allowlist of requests that need no token: `GET`/`HEAD` of the health probe, the console's boot info
 * and the OpenAPI pages, `GET` of the console's sign-in link and of the MCP OAuth callback, spelled exactly as routed (see request-path.ts). Everything else needs the token, except
 * what the console itself serves (decided where the console is installed).
 */
export function isOpenApiRequest(method: string, path: string): boolean {
  if (method === 'GET' && (matchesRoute(path, OAUTH_CALLBACK_ROUTE) || matchesRoute(path, SIGN_IN_ROUTE))) return true;
  if (method !== 'GET' && method !== 'HEAD') return false;
  return TOKEN_EXEMPT_ROUTES.some((route) => matchesRoute(path, route)) || DOCS_PATH.test(path);
}

/** Extracts the token from `Authorization: Bearer <token>`; undefined when absent or another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  return match ? match[1] : undefined;
}
