/**
 * Error redaction for MCP (openspec mcp): `<Class>: <message>` on one line, every configured header value and every
 * secret-looking env value of the server replaced by `[redacted]`, host paths of the server replaced, then the
 * general log redaction; at most 500 characters.
 */
import { homedir } from 'node:os';
import { redactSecrets, registerSecretValue } from '../common/redact';
import type { McpServerConfig } from './mcp.types';

const REDACTED = '[redacted]';
const MAX_CHARS = 500;
/** values shorter than this are not treated as secrets (they would mangle ordinary text) */
const MIN_SECRET_CHARS = 4;
const SECRET_ENV_KEY = /key|token|secret|password/i;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The secret values of a server: header values and env values whose key looks secret. */
export function serverSecrets(config: McpServerConfig): string[] {
  const values = [
    ...Object.values(config.headers),
    // every env value of a user entry is a secret; of a built-in entry, those whose key looks secret
    ...Object.entries(config.env)
      .filter(([key]) => !config.builtin || SECRET_ENV_KEY.test(key))
      .map(([, value]) => value),
  ];
  return values.filter((value) => value.length >= MIN_SECRET_CHARS);
}

/** Registers a server's secrets with the global log redaction (redaction by value). */
export function registerServerSecrets(config: McpServerConfig): void {
  for (const value of serverSecrets(config)) registerSecretValue(value);
}

/** The class name and message of anything thrown, with a useful cause for `fetch failed`. */
/** Error-like values (errors from another realm, e.g. Node core under Jest, fail `instanceof Error`). */
export function isErrorLike(value: unknown): value is Error {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

/** The class of an error: its `name` when set to something specific, else its constructor's name. */
export function errorClassName(error: unknown): string {
  if (!isErrorLike(error)) return 'Error';
  if (error.name && error.name !== 'Error') return error.name;
  const ctor = error.constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : 'Error';
}

export function describeError(error: unknown): string {
  if (isErrorLike(error)) {
    const name = errorClassName(error);
    let message = error.message || name;
    const cause = (error as Error & { cause?: unknown }).cause;
    if (isErrorLike(cause)) {
      const code = (cause as NodeJS.ErrnoException).code;
      message += code ? ` (${code})` : cause.message ? ` (${cause.message})` : '';
    }
    return `${name}: ${message}`;
  }
  return `Error: ${typeof error === 'string' ? error : 'unknown error'}`;
}

export interface RedactionContext {
  /** absolute paths replaced by a label: repo root, data dir, home */
  paths: Array<[string, string]>;
}

export function redactionContext(rootDir: string, dataDir: string): RedactionContext {
  const paths: Array<[string, string]> = [
    [dataDir, '<data>'],
    [rootDir, '<root>'],
    [homedir(), '~'],
  ];
  return { paths: paths.filter(([path]) => path.length > 1).sort((a, b) => b[0].length - a[0].length) };
}

/** Redacts a text that may carry a server's secrets or host paths (no length limit). */
export function redactServerText(text: string, config: McpServerConfig | undefined, context: RedactionContext): string {
  let out = text;
  const secrets = config ? serverSecrets(config).sort((a, b) => b.length - a.length) : [];
  if (secrets.length > 0) out = out.replace(new RegExp(secrets.map(escapeRegExp).join('|'), 'g'), REDACTED);
  for (const [path, label] of context.paths) out = out.split(path).join(label);
  return redactSecrets(out);
}

/** A connection or call error as shown to users and models: one line, redacted, ≤ 500 characters. */
export function redactMcpError(error: unknown, config: McpServerConfig | undefined, context: RedactionContext): string {
  const oneLine = describeError(error).replace(/[\r\n]+/g, ' ');
  return Array.from(redactServerText(oneLine, config, context)).slice(0, MAX_CHARS).join('');
}
