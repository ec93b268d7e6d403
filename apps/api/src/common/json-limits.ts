/**
 * Nesting limit for JSON a client sends (REST bodies, WebSocket frames, model-written tool arguments).
 *
 * Deeply nested JSON is cheap to send and expensive to take: `JSON.parse` of a few MiB of `[` takes seconds and hundreds
 * of MiB, and the recursive code that later walks the value (class-transformer in the validation pipe, schema checks)
 * overflows the stack with a RangeError. The text is therefore scanned before it is parsed: one iterative pass that
 * counts open arrays/objects outside of strings and stops at the first level past the limit. No legitimate CashCode
 * payload comes close to {@link MAX_JSON_DEPTH} levels.
 */

/** Deepest array/object nesting accepted in client JSON: `[[1]]` is 2 levels, a scalar 0. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests arrays/objects deeper than `maxDepth`. Works on a string or on UTF-8 bytes (the structural
 * characters are ASCII; the bytes of a multi-byte UTF-8 character never are). Malformed text is not diagnosed here:
 * `JSON.parse` does that afterwards. Runs in O(n) time and O(1) memory, without recursion.
 */
export function jsonNestingExceeds(text: string | Uint8Array, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const isString = typeof text === 'string';
  const length = text.length;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const code = isString ? text.charCodeAt(i) : text[i];
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if ((code === CLOSE_ARRAY || code === CLOSE_OBJECT) && depth > 0) {
      depth--;
    }
  }
  return false;
}

export type LimitedJsonResult = { ok: true; value: unknown } | { ok: false; reason: 'too_deep' | 'malformed'; message: string };

/** `JSON.parse` behind the nesting check: never throws, never parses text nested deeper than `maxDepth`. */
export function parseJsonLimited(text: string, maxDepth: number = MAX_JSON_DEPTH): LimitedJsonResult {
  if (jsonNestingExceeds(text, maxDepth)) {
    return { ok: false, reason: 'too_deep', message: `JSON is nested more than ${maxDepth} levels deep` };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: 'malformed', message: error instanceof Error ? error.message : 'parse error' };
  }
}

/** body-parser error type of a body refused by {@link verifyJsonBodyDepth} (mapped to a 400 problem). */
export const JSON_TOO_DEEP_ERROR_TYPE = 'entity.too.deep';

/** Thrown from the body parser's `verify` hook; body-parser passes status and type on to the error handler. */
class JsonBodyError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'JsonBodyError';
  }
}

/**
 * `verify` hook of the JSON body parser: runs on the raw body (already size-limited) before it is decoded and parsed.
 * UTF-8 bodies are scanned as bytes; UTF-16 bodies are decoded first. Other charsets the parser would accept (UTF-32,
 * UTF-7) cannot be checked cheaply and are refused with 415.
 */
export function verifyJsonBodyDepth(_req: unknown, _res: unknown, body: Buffer, encoding: string | null): void {
  const charset = (encoding ?? 'utf-8').toLowerCase();
  let text: string | Uint8Array = body;
  if (charset !== 'utf-8' && charset !== 'utf8') {
    if (!/^utf-16(?:le|be)?$/.test(charset)) {
      throw new JsonBodyError(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`);
    }
    text = new TextDecoder(charset).decode(body);
  }
  if (jsonNestingExceeds(text)) {
    throw new JsonBodyError(400, JSON_TOO_DEEP_ERROR_TYPE, `JSON body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
}
