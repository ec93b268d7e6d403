/**
 * The `browser` tool's settings (openspec browser "Requirement: Availability"), read with the rest of AppConfig and
 * documented in README "Configuration".
 */
import { ConfigError, parseBoolean, parseInteger, parseList } from './env-values';

export interface BrowserConfig {
  /**
   * CASHCODE_BROWSER_ENABLED: `true`/`false`, or unset (`null`): offered when the Chromium executable is found. `true`
   * with no Chromium is a start-up error.
   */
  enabled: boolean | null;
  /** CASHCODE_BROWSER_EXECUTABLE (default /usr/bin/chromium, Debian's package) */
  executable: string;
  /** CASHCODE_BROWSER_IDLE_SEC (default 300): a chat's browser context is closed after this long unused */
  idleMs: number;
  /** CASHCODE_BROWSER_TIMEOUT_MS (default 15000): one navigation or action, and each page request */
  timeoutMs: number;
  /** CASHCODE_BROWSER_MAX_TABS (default 10): tabs of one chat; pages opened beyond it are closed at once */
  maxTabs: number;
  /** CASHCODE_BROWSER_MAX_BYTES (default 10 MiB): one response the page loads (document, script, image, download) */
  maxResponseBytes: number;
  /** CASHCODE_BROWSER_SNAPSHOT_MAX_CHARS (default 20000): the longest snapshot text handed to the model */
  snapshotMaxChars: number;
  /**
   * CASHCODE_BROWSER_ALLOWED_DOMAINS (comma-separated; a name covers its subdomains): clicks, typing, selections and
   * key presses on a page outside these ask the owner. Unset: every domain is allowed (only form submissions ask).
   */
  allowedDomains: string[];
  /** host names whose addresses are not checked (tests stand a local server in for a public host; never from the environment) */
  trustedHosts?: string[];
}

const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function loadBrowserConfig(env: Record<string, string | undefined>): BrowserConfig {
  const rawEnabled = env['CASHCODE_BROWSER_ENABLED'];
  const allowedDomains = parseList(env['CASHCODE_BROWSER_ALLOWED_DOMAINS']).map((d) => d.toLowerCase().replace(/^\*\./, ''));
  for (const domain of allowedDomains) {
    if (!DOMAIN.test(domain)) throw new ConfigError(`CASHCODE_BROWSER_ALLOWED_DOMAINS: "${domain}" is not a domain name`);
  }
  return {
    enabled: rawEnabled === undefined || rawEnabled.trim() === '' ? null : parseBoolean('CASHCODE_BROWSER_ENABLED', rawEnabled, true),
    executable: env['CASHCODE_BROWSER_EXECUTABLE']?.trim() || '/usr/bin/chromium',
    idleMs: parseInteger('CASHCODE_BROWSER_IDLE_SEC', env['CASHCODE_BROWSER_IDLE_SEC'], 300, 1, 86_400) * 1000,
    timeoutMs: parseInteger('CASHCODE_BROWSER_TIMEOUT_MS', env['CASHCODE_BROWSER_TIMEOUT_MS'], 15_000, 100, 600_000),
    maxTabs: parseInteger('CASHCODE_BROWSER_MAX_TABS', env['CASHCODE_BROWSER_MAX_TABS'], 10, 1, 100),
    maxResponseBytes: parseInteger('CASHCODE_BROWSER_MAX_BYTES', env['CASHCODE_BROWSER_MAX_BYTES'], 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    snapshotMaxChars: parseInteger('CASHCODE_BROWSER_SNAPSHOT_MAX_CHARS', env['CASHCODE_BROWSER_SNAPSHOT_MAX_CHARS'], 20_000, 1000, 1_000_000),
    allowedDomains,
  };
}
