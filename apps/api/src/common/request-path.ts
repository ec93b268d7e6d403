import { trimTrailing } from './trim';
import type { IncomingMessage } from 'node:http';
import parseUrl from 'parseurl';

/**
 * Request paths as the router sees them, shared by the REST token guard, the console and the WebSocket upgrade check,
 * so that no layer decides on a different spelling of a path than the one that is routed.
 *
 * Routing is case-sensitive and literal: Express matches the raw (still percent-encoded) path of the request target
 * (an absolute-form target `http://host/p` is reduced to its path `/p`), tolerates one trailing slash, and neither
 * decodes literal segments, collapses duplicate slashes nor resolves dot segments. `routePath` gives that raw path and
 * `matchesRoute` applies the same equivalence, so an exact allowlist entry opens exactly the spellings that reach it.
 */

/** The raw path of a request target, as Express routes it (no query, percent-encoding kept). */
export function routePath(request: Pick<IncomingMessage, 'url'>): string {
  try {
    return parseUrl(request as IncomingMessage)?.pathname ?? '/';
  } catch {
    return '/';
  }
}

/** True when `path` is routed to the literal route `route` (exact, case-sensitive, one optional trailing slash). */
export function matchesRoute(path: string, route: string): boolean {
  return path === route || path === `${route}/`;
}

/**
 * The most lenient reading of a path: percent-decoded (repeatedly, so double encoding does not hide anything),
 * duplicate slashes collapsed, lower case, no trailing slash. Used only to decide that a path belongs to the API or the
 * gateway (and so is never the console's), which must hold for every spelling a client could think of; a path that
 * cannot be decoded counts as belonging to them.
 */
export function lenientPath(path: string): string | null {
  let current = path;
  for (let i = 0; i < 4; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (decoded === current) break;
    current = decoded;
  }
  const collapsed = current.replace(/\\/g, '/').replace(/\/{2,}/g, '/').toLowerCase();
  return collapsed.length > 1 ? trimTrailing(collapsed, '/') : collapsed;
}

/**
 * True for every spelling of a path under `/api`, `/ws`, `/v1` or `/metrics` (the Prometheus scrape endpoint, outside
 * `/api` by convention; see lenientPath), which the console never answers and the token guard always checks.
 */
export function isApiOrGatewayPath(path: string): boolean {
  const lenient = lenientPath(path);
  if (lenient === null) return true;
  return /^\/(?:api|ws|v1|metrics)(?:\/|$)/.test(lenient);
}

/** True for every spelling of a path under `/v1`, the OpenAI-compatible endpoint (see lenientPath). */
export function isOpenAiCompatPath(path: string): boolean {
  const lenient = lenientPath(path);
  return lenient !== null && /^\/v1(?:\/|$)/.test(lenient);
}
