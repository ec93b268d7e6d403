/**
 * Where the console finds the WebSocket gateway, first match wins:
 * 1. `window.__CASHCODE__.wsUrl` (set by an embedding page or a test's init script);
 * 2. the `?ws=` query parameter;
 * 3. `<meta name="cashcode-ws-url" content="…">`;
 * 4. the API's client config (`GET /api/client-config` → `{ ws_port, ws_path }`), when the server offers one;
 * 5. `ws(s)://<page host name>:8765/` (the default gateway port), or `/ws` on the page's own origin when the
 *    page itself is served from port 8765.
 */
export const DEFAULT_WS_PORT = 8765;

export interface ClientConfigLike {
  ws_port?: unknown;
  ws_path?: unknown;
  ws_url?: unknown;
}

interface LocationLike {
  protocol: string;
  hostname: string;
  host: string;
  port: string;
  search: string;
}

declare global {
  interface Window {
    __CASHCODE__?: { wsUrl?: string };
  }
}

function isWsUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '') return false;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'ws:' || url.protocol === 'wss:';
  } catch {
    return false;
  }
}

function wsScheme(location: LocationLike): 'ws:' | 'wss:' {
  return location.protocol === 'https:' ? 'wss:' : 'ws:';
}

function formatHost(hostname: string): string {
  return hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
}

/** An explicit override (global, query parameter or meta tag), or null. */
export function wsUrlOverride(
  location: LocationLike,
  globalConfig: { wsUrl?: string } | undefined,
  metaContent: string | null,
): string | null {
  if (isWsUrl(globalConfig?.wsUrl)) return globalConfig.wsUrl.trim();
  const fromQuery = new URLSearchParams(location.search).get('ws');
  if (isWsUrl(fromQuery)) return fromQuery.trim();
  if (isWsUrl(metaContent)) return metaContent.trim();
  return null;
}

/** The URL derived from the server's client config, or the default gateway address. */
export function wsUrlFromConfig(location: LocationLike, config: ClientConfigLike | null): string {
  const scheme = wsScheme(location);
  if (config) {
    if (isWsUrl(config.ws_url)) return config.ws_url.trim();
    const port = typeof config.ws_port === 'number' && Number.isInteger(config.ws_port) ? config.ws_port : null;
    const rawPath = typeof config.ws_path === 'string' && config.ws_path.startsWith('/') ? config.ws_path : '/';
    if (port !== null) return `${scheme}//${formatHost(location.hostname)}:${port}${rawPath}`;
  }
  if (location.port === String(DEFAULT_WS_PORT)) return `${scheme}//${location.host}/ws`;
  return `${scheme}//${formatHost(location.hostname)}:${DEFAULT_WS_PORT}/`;
}

/** Adds `?token=` for servers that require an API token. */
export function withToken(url: string, token: string | null): string {
  if (!token) return url;
  const parsed = new URL(url);
  parsed.searchParams.set('token', token);
  return parsed.toString();
}
