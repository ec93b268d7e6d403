/**
 * MCP tool annotations (`tools/list`: `title`, `annotations.{title, readOnlyHint, destructiveHint, idempotentHint,
 * openWorldHint}`): kept as the server declared them (known keys with the declared type only) in the tool descriptor,
 * the schema cache and the REST tool listing. `readOnlyHint: true` makes a tool's risk class `read`; everything else
 * is `mcp` (approval policy).
 */
import { isRecord } from '@cashcode/contracts';
import type { McpToolAnnotations } from '@cashcode/contracts';

const BOOLEAN_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
const MAX_TITLE_CHARS = 200;

function cleanTitle(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const title = value.trim();
  if (title === '') return undefined;
  return Array.from(title).slice(0, MAX_TITLE_CHARS).join('');
}

/** The known annotation keys with their declared types; undefined when none is present. */
export function sanitizeAnnotations(raw: unknown): McpToolAnnotations | undefined {
  if (!isRecord(raw)) return undefined;
  const out: McpToolAnnotations = {};
  const title = cleanTitle(raw['title']);
  if (title !== undefined) out.title = title;
  for (const key of BOOLEAN_HINTS) {
    const value = raw[key];
    if (typeof value === 'boolean') out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The display title of a tool: its own `title`, else `annotations.title`. */
export function toolTitle(rawTitle: unknown, annotations: McpToolAnnotations | undefined): string | undefined {
  return cleanTitle(rawTitle) ?? annotations?.title;
}
