import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../config/app-config';

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

/**
 * Bearer-token check for REST and the WS handshake when CASHCODE_API_TOKEN is set: constant-time comparison of
 * SHA-256 digests (no length leak), and a simple per-client failure throttle (after `maxFailures` failures inside
 * `windowMs`, that client is refused until the window ends, even with the right token).
 */
export class TokenVerifier {
  private readonly expectedDigest: Buffer | null;
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    token: string | null,
    private readonly maxFailures = 20,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.expectedDigest = token === null ? null : createHash('sha256').update(token, 'utf8').digest();
  }

  get enabled(): boolean {
    return this.expectedDigest !== null;
  }

  /** Seconds until a throttled client may try again. */
  retryAfterSeconds(clientKey: string): number {
    const entry = this.failures.get(clientKey);
    return entry ? Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000)) : 0;
  }

  check(presented: string | undefined | null, clientKey: string): TokenCheck {
    if (this.expectedDigest === null) return 'ok';
    const now = this.now();
    const entry = this.failures.get(clientKey);
    if (entry && entry.resetAt <= now) this.failures.delete(clientKey);
    const current = this.failures.get(clientKey);
    if (current && current.count >= this.maxFailures) return 'throttled';
    const digest = createHash('sha256')
      .update(presented ?? '', 'utf8')
      .digest();
    const ok = presented !== undefined && presented !== null && timingSafeEqual(digest, this.expectedDigest);
    if (ok) return 'ok';
    if (current) current.count += 1;
    else this.failures.set(clientKey, { count: 1, resetAt: now + this.windowMs });
    if (this.failures.size > 10_000) this.pruneExpired(now);
    return 'unauthorized';
  }

  private pruneExpired(now: number): void {
    for (const [key, value] of this.failures) if (value.resetAt <= now) this.failures.delete(key);
  }
}

/** Extracts the token from `Authorization: Bearer <token>`; undefined when absent or another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  return match ? match[1] : undefined;
}
