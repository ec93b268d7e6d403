/**
 * Final redaction applied to every rendered log line (spec §14) and usable by any module before text leaves the
 * server: bearer tokens, `key: value` / `key=value` pairs whose key names a secret, `sk-…` keys, and every secret
 * value registered at runtime (API token, model API keys, MCP header values) — redaction by value, not only by name.
 */

const REDACTED = '[redacted]';

/**
 * `Bearer <token>`: the scheme is found by this pattern and the token scanned by `bearerTokenEnd`, so that a text
 * made of nothing but bearer tokens costs one short scan per token and no replacement callback.
 */
const BEARER_SCHEME = /\bBearer\s+/gi;

/**
 * `key: value` or `key=value`, the key optionally quoted, the value quoted or a bare run (an auth scheme is kept with
 * it), matched only where it can start (see `redactSecretPairs`): at the quote or the first character of a `[\w-]+`
 * run (the look-behind) that names a secret somewhere inside it (the look-ahead, which cannot leave the run). Linear
 * time at each start: no split of the run between quantifiers is ever explored, every value alternative begins with
 * a different character class and each loop inside one has a single way to consume a character.
 * A quote may close the key even when none opened it here: in `{"note":"cookie:","api_key":"…"}` the quoted value
 * of `cookie:` ends on the quote that opens `"api_key"`, whose value must still be found.
 */
const SECRET_PAIR_AT =
  /((["']?)(?<![\w-])(?=[\w-]*?(?:api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password))[\w-]+["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|(?:(?:Bearer|Basic|Token)\s+)?(?:\[redacted\]|[^\s"',;&}\]]+))/iy;

/**
 * A secret key name: every SECRET_PAIR_AT match contains one (same names, same flags) inside its key run, so the
 * pair pattern is only tried at the start of a run where this pre-scan finds one.
 */
const SECRET_KEY_NAME = /api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password/gi;

const SK_KEY = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{8,}/g;

const secretValues = new Set<string>();

/**
 * The registered values as one pattern, longest first so that a secret containing another is replaced whole; built
 * when the set changes (never per call), null when nothing is registered.
 */
let secretValuesPattern: RegExp | null = null;

function rebuildSecretValuesPattern(): void {
  const values = [...secretValues].sort((a, b) => b.length - a.length);
  secretValuesPattern = values.length === 0 ? null : new RegExp(values.map(escapeRegExp).join('|'), 'g');
}

/** Registers a secret value (≥ 6 chars) so that it is replaced wherever it appears in redacted text. */
export function registerSecretValue(value: string | null | undefined): void {
  if (typeof value === 'string' && value.length >= 6 && !secretValues.has(value)) {
    secretValues.add(value);
    rebuildSecretValuesPattern();
  }
}

/** Forgets a secret value (e.g. a replaced model API key). */
export function unregisterSecretValue(value: string | null | undefined): void {
  if (typeof value === 'string' && secretValues.delete(value)) rebuildSecretValuesPattern();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `[\w-]`: a character of a key run. */
function isKeyChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d
  );
}

/** `\s` as JavaScript patterns define it (ASCII blanks, NBSP, the Unicode space separators, line terminators, BOM). */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

/** The end of the bearer token starting at `from` (`[^\s"',;]*`); `from` itself when there is none. */
function bearerTokenEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (code === 0x22 || code === 0x27 || code === 0x2c || code === 0x3b || isSpace(code)) break;
    end++;
  }
  return end;
}

/** `Bearer <token>` → `Bearer [redacted]`, the scheme's spelling kept. One scan of the text. */
function redactBearerTokens(text: string): string {
  BEARER_SCHEME.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let scheme = BEARER_SCHEME.exec(text); scheme !== null; scheme = BEARER_SCHEME.exec(text)) {
    const tokenEnd = bearerTokenEnd(text, BEARER_SCHEME.lastIndex);
    if (tokenEnd === BEARER_SCHEME.lastIndex) {
      // no token after the blanks: the next scheme can only start after them
      continue;
    }
    out += text.slice(copied, scheme.index + 6) + ' ' + REDACTED;
    copied = tokenEnd;
    BEARER_SCHEME.lastIndex = tokenEnd;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Replaces the value of every secret-named pair. The pre-scan finds each key name; the key run holding it is found
 * by scanning back (never past text already consumed), and SECRET_PAIR_AT is tried once at that run (or the quote
 * before it). A run where it fails is skipped whole, so every character is scanned a bounded number of times.
 */
function redactSecretPairs(text: string): string {
  SECRET_KEY_NAME.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let name = SECRET_KEY_NAME.exec(text); name !== null; name = SECRET_KEY_NAME.exec(text)) {
    let start = name.index;
    while (start > copied && isKeyChar(text.charCodeAt(start - 1))) start--;
    if (start > copied && (text.charCodeAt(start - 1) === 0x22 || text.charCodeAt(start - 1) === 0x27)) start--;
    SECRET_PAIR_AT.lastIndex = start;
    const pair = SECRET_PAIR_AT.exec(text);
    if (pair === null) {
      let runEnd = name.index + name[0].length;
      while (runEnd < text.length && isKeyChar(text.charCodeAt(runEnd))) runEnd++;
      SECRET_KEY_NAME.lastIndex = runEnd;
      continue;
    }
    const value = pair[3]!;
    const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
    out += text.slice(copied, start) + pair[1]! + quote + REDACTED + quote;
    copied = SECRET_PAIR_AT.lastIndex;
    SECRET_KEY_NAME.lastIndex = copied;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Returns `text` with secrets replaced by `[redacted]`. Idempotent. Linear time in the length of `text`. */
export function redactSecrets(text: string): string {
  let out = text;
  if (secretValuesPattern !== null) out = out.replace(secretValuesPattern, REDACTED);
  out = redactBearerTokens(out);
  out = redactSecretPairs(out);
  out = out.replace(SK_KEY, `sk-${REDACTED}`);
  return out;
}
