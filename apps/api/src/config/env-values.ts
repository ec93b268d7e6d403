/**
 * Reading one environment variable into a typed configuration value (config/app-config.ts assembles them): each
 * parser names the variable in its error, so a bad value stops the server at boot with a readable message.
 */
import { isIP } from 'node:net';
import type { ExecSandboxMode } from '@cashcode/contracts';
import ipaddr from 'ipaddr.js';
import { trimTrailing } from '../common/trim';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'verbose';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS: Record<string, LogLevel> = {
  critical: 'error',
  error: 'error',
  warning: 'warn',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  verbose: 'verbose',
  trace: 'verbose',
};

export function parsePort(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be an integer port number (0-65535), got "${text}"`);
  const value = Number(text);
  if (value < 0 || value > 65535) throw new ConfigError(`${name} must be between 0 and 65535, got ${value}`);
  return value;
}

export function parseInteger(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  if (!/^-?\d+$/.test(text)) throw new ConfigError(`${name} must be an integer, got "${text}"`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function parseBoolean(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off'].includes(text)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw.trim()}"`);
}

export function parseLogLevel(name: string, raw: string | undefined, fallback: LogLevel): LogLevel {
  if (raw === undefined || raw.trim() === '') return fallback;
  const level = LOG_LEVELS[raw.trim().toLowerCase()];
  if (!level) throw new ConfigError(`${name} must be one of ERROR, WARNING, INFO, DEBUG, got "${raw.trim()}"`);
  return level;
}

export function parseList(raw: string | undefined): string[] {
  if (!raw) return [];
  return raw
    .split(',')
    .map((entry) => trimTrailing(entry.trim(), '/'))
    .filter((entry) => entry !== '');
}

export function parseHost(name: string, raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw.trim() === '') return fallback;
  const host = raw.trim();
  if (isIP(host) === 0 && !/^[A-Za-z0-9.-]+$/.test(host)) throw new ConfigError(`${name} is not a valid host: "${host}"`);
  return host;
}

export function parseUrl(name: string, raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    return trimTrailing(url.toString(), '/');
  } catch {
    throw new ConfigError(`${name} must be an http or https URL`);
  }
}

const EXEC_SANDBOX_MODES: readonly ExecSandboxMode[] = ['auto', 'bwrap', 'off'];

export function parseSandboxMode(name: string, raw: string | undefined): ExecSandboxMode {
  if (raw === undefined || raw.trim() === '') return 'auto';
  const text = raw.trim().toLowerCase();
  const mode = EXEC_SANDBOX_MODES.find((candidate) => candidate === text);
  if (mode === undefined) throw new ConfigError(`${name} must be one of auto, bwrap, off, got "${raw.trim()}"`);
  return mode;
}

/** CASHCODE_AUTH: `on` (the default) or `off` (case-insensitive); true when authentication is on. */
export function parseAuthMode(raw: string | undefined): boolean {
  if (raw === undefined || raw.trim() === '') return true;
  const text = raw.trim().toLowerCase();
  if (text === 'on' || text === 'off') return text === 'on';
  throw new ConfigError(`CASHCODE_AUTH must be on or off, got "${raw.trim()}"`);
}

/** Named ranges CASHCODE_TRUSTED_PROXIES accepts besides addresses and CIDR ranges (the names proxy-addr uses). */
const PROXY_RANGE_NAMES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * CASHCODE_TRUSTED_PROXIES: comma-separated IP addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`) or the names
 * `loopback`, `linklocal`, `uniquelocal`; returned as `address/bits` strings. An IPv4-mapped IPv6 entry is read as
 * its IPv4 address.
 */
export function parseTrustedProxies(name: string, raw: string | undefined): string[] {
  const ranges: string[] = [];
  for (const entry of (raw ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')) {
    const named = PROXY_RANGE_NAMES[entry.toLowerCase()];
    if (named) {
      ranges.push(...named);
      continue;
    }
    const [addressText = '', bitsText, extra] = entry.split('/');
    const v4 = ipaddr.IPv4.isValidFourPartDecimal(addressText);
    const v6 = !v4 && !addressText.includes('%') && ipaddr.IPv6.isValid(addressText);
    const maxBits = v4 ? 32 : 128;
    const bits = bitsText === undefined ? maxBits : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : -1;
    if ((!v4 && !v6) || extra !== undefined || bits < 0 || bits > maxBits) {
      throw new ConfigError(
        `${name} must list IP addresses or CIDR ranges (e.g. 10.0.0.1, 10.0.0.0/8, fd00::/8, loopback), got "${entry}"`,
      );
    }
    const address = ipaddr.parse(addressText);
    if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96) {
      ranges.push(`${address.toIPv4Address().toString()}/${bits - 96}`);
    } else {
      ranges.push(`${address.toString()}/${bits}`);
    }
  }
  return [...new Set(ranges)];
}

/** A boolean setting: `1`/`true`/`yes` (case-insensitive) enable, anything else leaves the feature off. */
export function parseEnableFlag(raw: string | undefined): boolean {
  return raw !== undefined && ['1', 'true', 'yes', 'on'].includes(raw.trim().toLowerCase());
}

/** An integer setting with a floor (openspec http-platform): smaller values are raised to the floor. */
export function parseAtLeast(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  if (!/^-?\d+$/.test(text)) throw new ConfigError(`${name} must be an integer, got "${text}"`);
  return Math.min(max, Math.max(min, Number(text)));
}

/**
 * Environment variables `exec` commands inherit (SECURITY.md, "The exec sandbox"); everything else (keys, tokens) stays
 * out.
 */
export const EXEC_ENV_ALLOWLIST = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TMPDIR', 'USER', 'LOGNAME'];

export function pickEnv(env: NodeJS.ProcessEnv, keys: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const key of keys) {
    const value = env[key];
    if (typeof value === 'string' && value !== '') picked[key] = value;
  }
  return picked;
}

/** The OS user config directory (`$XDG_CONFIG_HOME` or `~/.config` on Linux) where `settings/llm.json` lives. */
