/**
 * Validation of MCP catalog entries: the create/update rules of the REST API, applied in order, and the built-in
 * catalog's network entries. Throws McpError('validation') with the first failing rule's message and field.
 */
import {
  isRecord,
  MCP_ENV_NAME_PATTERN,
  MCP_HEADER_NAME_PATTERN,
  MCP_HTTP_TYPE_ALIAS,
  MCP_MAX_ARGS,
  MCP_MAX_ENV,
  MCP_MASKED_VALUE,
  MCP_MAX_HEADERS,
  MCP_SERVER_NAME_PATTERN,
  MCP_USER_TRANSPORTS,
  type McpUserTransportType,
} from '@cashcode/contracts';
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { commandSecretBinding, secretMayFollow, urlSecretBinding, type SecretBinding } from '../common/secret-binding';
import { McpError } from './mcp.errors';

export const MCP_VALIDATION_MESSAGES = {
  name: 'name must start with a lowercase letter or digit and contain only lowercase letters, digits, underscores, or hyphens (max 64)',
  type: 'type must be one of stdio, sse, streamable_http (or http)',
  command: 'command is required for stdio servers, at most 4096 characters, without NUL characters',
  args: `args must be a list of at most ${MCP_MAX_ARGS} strings without NUL characters`,
  envObject: `env must be an object of at most ${MCP_MAX_ENV} string values`,
  envName: (name: string) => `invalid environment variable name: '${name}'`,
  envString: (name: string) => `env '${name}' must have a string value without NUL characters`,
  envMasked: (name: string) => `env '${name}' uses a masked value without a stored secret`,
  envCommandMoved: (name: string) =>
    `env '${name}' keeps a stored value, but the command or its arguments changed; enter the value for it again`,
  cwd: 'cwd must be an absolute path of an existing directory',
  stdioOnly: 'command, args, env and cwd are only for stdio servers',
  networkOnly: 'url and headers are only for sse and streamable_http servers',
  displayName: 'display_name is required and must be at most 100 characters',
  description: 'description must be at most 1000 characters',
  urlLength: 'url is required and must be at most 2048 characters',
  urlAbsolute: 'url must be an absolute HTTP(S) URL',
  urlCredentials: 'url must not contain embedded credentials',
  headersObject: 'headers must be an object',
  headersCount: `headers may contain at most ${MCP_MAX_HEADERS} entries`,
  headerName: (name: string) => `invalid header name: '${name}'`,
  headerDuplicate: (name: string) => `duplicate header name: '${name}'`,
  headerString: (name: string) => `header '${name}' must have a string value`,
  headerMasked: (name: string) => `header '${name}' uses a masked value without a stored secret`,
  headerOriginMoved: (name: string) =>
    `header '${name}' keeps a stored value, but the url moved to another origin; enter the value for it again`,
  headerLength: (name: string) => `header '${name}' must be non-empty and at most 4096 characters`,
  headerNewline: (name: string) => `header '${name}' must not contain newlines`,
} as const;

export interface ValidUserEntry {
  type: McpUserTransportType;
  displayName: string;
  description: string;
  url: string;
  headers: Record<string, string>;
  /** stdio only ('' / [] / {} for network entries); cwd '' = the default working directory */
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

function fail(field: string, message: string): never {
  throw new McpError('validation', message, field);
}

/**
 * The code points of `text`, or a number above `max` found from the length alone (a code point is one
 * or two UTF-16 units): a value of a MiB is refused without being walked character by character.
 */
function codePoints(text: string, max: number): number {
  if (text.length > 2 * max) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Rule 1 (create only): the trimmed name. */
export function validateServerName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (!MCP_SERVER_NAME_PATTERN.test(name)) fail('name', MCP_VALIDATION_MESSAGES.name);
  return name;
}

/** Rule 5: an absolute http(s) URL without userinfo, trimmed, 1..2048 chars. */
export function validateUrl(raw: unknown, field = 'url'): string {
  const url = typeof raw === 'string' ? raw.trim() : '';
  if (url === '' || codePoints(url, 2048) > 2048) fail(field, MCP_VALIDATION_MESSAGES.urlLength);
  const match = /^https?:\/\/([^/?#]*)/i.exec(url);
  let parsed: URL | null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!match || !parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    fail(field, MCP_VALIDATION_MESSAGES.urlAbsolute);
  }
  if (match[1]!.includes('@')) fail(field, MCP_VALIDATION_MESSAGES.urlCredentials);
  return url;
}

/**
 * Stored secret values with the binding they were entered for: for headers the origin of the server's URL (a stdio
 * server's `env` values would be bound to its command the same way).
 */
export interface StoredSecrets {
  values: Readonly<Record<string, string>>;
  binding: SecretBinding | null;
}

/**
 * The stored value a masked submission keeps: the stored value of the same name (names compared case-insensitively),
 * only while the submission is for the same binding. Fails on `field` when there is no such value or when the
 * binding moved (then the secret has to be entered again: it never follows to another place).
 */
function keptSecret(
  name: string,
  stored: StoredSecrets | null,
  target: SecretBinding | null,
  field: string,
  messages: { masked: (name: string) => string; moved: (name: string) => string } = {
    masked: MCP_VALIDATION_MESSAGES.headerMasked,
    moved: MCP_VALIDATION_MESSAGES.headerOriginMoved,
  },
  caseInsensitive = true,
): string {
  const values: Readonly<Record<string, string | undefined>> = stored?.values ?? {};
  const lower = name.toLowerCase();
  const kept =
    values[name] ??
    (caseInsensitive ? Object.entries(values).find(([storedName]) => storedName.toLowerCase() === lower)?.[1] : undefined);
  if (stored === null || kept === undefined) fail(field, messages.masked(name));
  if (!secretMayFollow(stored.binding, target)) fail(field, messages.moved(name));
  return kept;
}

const NUL = String.fromCharCode(0);

/**
 * A stdio entry's `env`: valid names, string values without NUL; `********` keeps the stored value of the same name
 * (case-sensitive, as environments are) only while the command and arguments are unchanged (`target`).
 */
export function validateEnv(raw: unknown, stored: StoredSecrets | null, target: SecretBinding | null): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) fail('env', MCP_VALIDATION_MESSAGES.envObject);
  const entries = Object.entries(raw);
  if (entries.length > MCP_MAX_ENV) fail('env', MCP_VALIDATION_MESSAGES.envObject);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!MCP_ENV_NAME_PATTERN.test(name)) fail(`env.${name}`, MCP_VALIDATION_MESSAGES.envName(name));
    const key = `env.${name}`;
    if (typeof value !== 'string' || value.includes(NUL) || value.length > 32_768) {
      fail(key, MCP_VALIDATION_MESSAGES.envString(name));
    }
    out[name] =
      value === MCP_MASKED_VALUE
        ? keptSecret(name, stored, target, key, { masked: MCP_VALIDATION_MESSAGES.envMasked, moved: MCP_VALIDATION_MESSAGES.envCommandMoved }, false)
        : value;
  }
  return out;
}

/** A stdio entry's command, args and cwd. */
export function validateStdioCommand(input: Record<string, unknown>): { command: string; args: string[]; cwd: string } {
  const rawCommand = input['command'];
  const command = typeof rawCommand === 'string' ? rawCommand.trim() : '';
  if (command === '' || command.length > 4096 || command.includes(NUL)) fail('command', MCP_VALIDATION_MESSAGES.command);
  const rawArgs = input['args'] ?? [];
  if (
    !Array.isArray(rawArgs) ||
    rawArgs.length > MCP_MAX_ARGS ||
    !rawArgs.every((arg) => typeof arg === 'string' && !arg.includes(NUL) && arg.length <= 32_768)
  ) {
    fail('args', MCP_VALIDATION_MESSAGES.args);
  }
  const rawCwd = input['cwd'] ?? '';
  if (typeof rawCwd !== 'string' || rawCwd.includes(NUL)) fail('cwd', MCP_VALIDATION_MESSAGES.cwd);
  const cwd = rawCwd.trim();
  if (cwd !== '') {
    let isDir: boolean;
    try {
      isDir = isAbsolute(cwd) && statSync(cwd).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) fail('cwd', MCP_VALIDATION_MESSAGES.cwd);
  }
  return { command, args: [...(rawArgs as string[])], cwd };
}

/** `http` (Claude Code, VS Code) is a spelling of `streamable_http`. */
export function normalizeTransportType(raw: unknown): unknown {
  return raw === MCP_HTTP_TYPE_ALIAS ? 'streamable_http' : raw;
}

/**
 * Rule 6: headers. `********` keeps the stored value of an existing header of the same name (update only; names
 * compared case-insensitively) while the URL stays on the origin of the stored entry (`target` is the binding of the
 * submitted URL); the result holds real values only.
 */
export function validateHeaders(
  raw: unknown,
  stored: StoredSecrets | null,
  target: SecretBinding | null = null,
  field = 'headers',
): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) fail(field, MCP_VALIDATION_MESSAGES.headersObject);
  const entries = Object.entries(raw);
  if (entries.length > MCP_MAX_HEADERS) fail(field, MCP_VALIDATION_MESSAGES.headersCount);
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const [rawName, value] of entries) {
    const name = rawName.trim();
    if (!MCP_HEADER_NAME_PATTERN.test(name)) fail(`${field}.${rawName}`, MCP_VALIDATION_MESSAGES.headerName(rawName));
    const key = `${field}.${name}`;
    if (seen.has(name.toLowerCase())) fail(key, MCP_VALIDATION_MESSAGES.headerDuplicate(name));
    seen.add(name.toLowerCase());
    if (typeof value !== 'string') fail(key, MCP_VALIDATION_MESSAGES.headerString(name));
    const real = value === MCP_MASKED_VALUE ? keptSecret(name, stored, target, key) : value;
    const length = codePoints(real, 4096);
    if (length < 1 || length > 4096) fail(key, MCP_VALIDATION_MESSAGES.headerLength(name));
    if (/[\r\n]/.test(real)) fail(key, MCP_VALIDATION_MESSAGES.headerNewline(name));
    out[name] = real;
  }
  return out;
}

/**
 * What an update starts from: the stored entry's URL (its origin binds the header values) and header values, and for
 * stdio its command and arguments (they bind the env values) and env values.
 */
export interface StoredNetworkEntry {
  type?: string;
  url: string;
  headers: Readonly<Record<string, string>>;
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
}

/**
 * Rules 2–6 of a user entry (create: after rule 1; update: the body without `name`). `stored` is the entry being
 * updated (null on create). Display name and description are stored trimmed.
 */
export function validateUserEntry(
  input: Record<string, unknown>,
  stored: StoredNetworkEntry | null,
  defaultDisplayName?: string,
): ValidUserEntry {
  const inferred = typeof input['command'] === 'string' && input['url'] === undefined ? 'stdio' : 'sse';
  const rawType = normalizeTransportType(input['type'] ?? inferred);
  if (typeof rawType !== 'string' || !(MCP_USER_TRANSPORTS as readonly string[]).includes(rawType)) {
    fail('type', MCP_VALIDATION_MESSAGES.type);
  }
  const rawDisplay = input['display_name'] ?? input['displayName'] ?? defaultDisplayName;
  const displayName = typeof rawDisplay === 'string' ? rawDisplay.trim() : '';
  if (displayName === '' || codePoints(displayName, 100) > 100) fail('display_name', MCP_VALIDATION_MESSAGES.displayName);
  const rawDescription = input['description'] ?? '';
  if (typeof rawDescription !== 'string') fail('description', MCP_VALIDATION_MESSAGES.description);
  const description = rawDescription.trim();
  if (codePoints(description, 1000) > 1000) fail('description', MCP_VALIDATION_MESSAGES.description);
  if (rawType === 'stdio') {
    const { command, args, cwd } = validateStdioCommand(input);
    const storedSecrets =
      stored === null || stored.type !== 'stdio'
        ? null
        : { values: stored.env ?? {}, binding: commandSecretBinding(stored.command ?? '', stored.args ?? []) };
    const env = validateEnv(input['env'], storedSecrets, commandSecretBinding(command, args));
    for (const key of ['url', 'headers'] as const) {
      if (input[key] !== undefined) fail(key, MCP_VALIDATION_MESSAGES.networkOnly);
    }
    return { type: 'stdio', displayName, description, url: '', headers: {}, command, args, env, cwd };
  }
  for (const key of ['command', 'args', 'env', 'cwd'] as const) {
    if (input[key] !== undefined) fail(key, MCP_VALIDATION_MESSAGES.stdioOnly);
  }
  const url = validateUrl(input['url']);
  const storedSecrets =
    stored === null || stored.type === 'stdio' ? null : { values: stored.headers, binding: urlSecretBinding(stored.url) };
  const headers = validateHeaders(input['headers'], storedSecrets, urlSecretBinding(url));
  return { type: rawType as McpUserTransportType, displayName, description, url, headers, command: '', args: [], env: {}, cwd: '' };
}

/** Truncates to `max` code points. */
export function truncateCodePoints(text: string, max: number): string {
  return Array.from(text).slice(0, max).join('');
}
