/**
 * Final redaction applied to every rendered log line (openspec http-platform, runtime logging) and usable by any module before text leaves the
 * server: bearer tokens, `key: value` / `key=value` pairs whose key names a secret, `sk-…` and `cck_…` keys, and every secret
 * value registered at runtime (API token, model API keys, MCP header values) — redaction by value, not only by name.
 */

const REDACTED = '[redacted]';

const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;

/**
 * `key: value` or `key=value`, the key optionally quoted, the value quoted or a bare run (an auth scheme is kept with
 * it). Linear time on any input: the key is one whole `[\w-]+` run that starts at a run boundary (the look-behind)
 * and names a secret somewhere inside it (the look-ahead, which cannot leave the run), so no start position inside a
 * run is tried twice and no split of the run between quantifiers is ever explored; every value alternative begins
 * with a different character class and each loop inside one has a single way to consume a character.
 * A quote may close the key even when none opened it here: in `{"note":"cookie:","api_key":"…"}` the quoted value
 * of `cookie:` ends on the quote that opens `"api_key"`, whose value must still be found.
 */
const SECRET_PAIR =
  /((["']?)(?<![\w-])(?=[\w-]*?(?:api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password))[\w-]+["']?\s*[:=]\s*)(?:(")(?:[^"\\]|\\.)*"|(')[^']*'|(?:(?:Bearer|Basic|Token)\s+)?(?:\[redacted\]|[^\s"',;&}\]]+))/gi;

/**
 * Groups 1 (the key and separator) and 3 / 4 (the value's double / single quote, kept around the marker): the
 * replacement is a string, not a function. A text made of nothing but matches (`"secret":"` repeated) holds one every
 * ten characters, and a function called for each costs several times the pattern itself.
 */
const SECRET_PAIR_REPLACEMENT = `$1$3$4${REDACTED}$3$4`;

/**
 * A secret key name anywhere in the text: every SECRET_PAIR match contains one (same names, same flags), so a line
 * without one skips SECRET_PAIR entirely.
 */
const SECRET_KEY_NAME = /api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password/i;

const SK_KEY = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{8,}/g;
/** keys of the OpenAI-compatible endpoint (`cck_` + base64url), known to the server only as hashes */
const CCK_KEY = /(?<![A-Za-z0-9])cck_[A-Za-z0-9_-]{8,}/g;

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

/** Returns `text` with secrets replaced by `[redacted]`. Idempotent. */
export function redactSecrets(text: string): string {
  let out = text;
  if (secretValuesPattern !== null) out = out.replace(secretValuesPattern, REDACTED);
  out = out.replace(BEARER, `$1 ${REDACTED}`);
  if (SECRET_KEY_NAME.test(out)) out = out.replace(SECRET_PAIR, SECRET_PAIR_REPLACEMENT);
  out = out.replace(SK_KEY, `sk-${REDACTED}`);
  if (out.includes('cck_')) out = out.replace(CCK_KEY, `cck_${REDACTED}`);
  return out;
}
