/**
 * Small runtime type guards used by the API and the console alike, so neither side keeps its own copy.
 */

/** A plain JSON-like object: not null and not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether `error` carries one of `codes` as its string `code` (Node's fs/net errors, a problem body, a coded
 * error). Duck-typed on purpose: errors from another realm (e.g. under Jest) fail `instanceof` checks.
 */
export function isErrorCode(error: unknown, ...codes: string[]): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && codes.includes(code);
}
