/**
 * Wrapper names and parameter schemas of MCP tools (openspec mcp "Requirement: Tool wrappers and calls"). The original
 * Python server also gave every property sub-schema object defaults; this one does not.
 *
 * - Name: `mcp_<server>_<tool>`; a tool name with characters outside `[A-Za-z0-9_-]` has them replaced by `_`, and a
 *   name longer than 64 characters (the model APIs' limit) is shortened with a hash suffix, so a server's odd tool
 *   names never break the model request. Ownership is recorded, never inferred from the prefix.
 * - Schema: recursively over `properties`, `items` and `anyOf`/`oneOf`/`allOf`, a `type` list of `"null"` plus one
 *   other type becomes that type with `nullable: true`; only the root schema gets the defaults `type: "object"`,
 *   `properties: {}`, `required: []` (property sub-schemas are left as they are).
 */
import { isRecord } from '@cashcode/contracts';
import { createHash } from 'node:crypto';
import type { JsonSchemaObject } from '../agent/agent-tool';

export const MAX_TOOL_NAME = 64;

const VALID_NAME = /^[A-Za-z0-9_-]+$/;

/** The wrapper name of a server's tool. */
export function wrapperName(server: string, tool: string): string {
  const plain = `mcp_${server}_${tool}`;
  if (VALID_NAME.test(plain) && plain.length <= MAX_TOOL_NAME) return plain;
  return hashedWrapperName(server, tool);
}

/** A distinct variant: sanitised, shortened, with a hash of the original name (also used on a name collision). */
export function hashedWrapperName(server: string, tool: string): string {
  const safe = `mcp_${server}_${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const suffix = `_${hash8(`mcp_${server}_${tool}`)}`;
  return safe.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
}

function hash8(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
}

function normalizeNullable(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  const type = out['type'];
  if (Array.isArray(type) && type.includes('null')) {
    const others = type.filter((t) => t !== 'null');
    if (others.length === 1) {
      out['type'] = others[0];
      out['nullable'] = true;
    }
  }
  if (isRecord(out['properties'])) {
    const props: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(out['properties'])) {
      props[key] = isRecord(value) ? normalizeNullable(value) : value;
    }
    out['properties'] = props;
  }
  if (isRecord(out['items'])) out['items'] = normalizeNullable(out['items']);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map((item) => (isRecord(item) ? normalizeNullable(item) : item));
  }
  return out;
}

/** The OpenAI function `parameters` for an MCP tool's `inputSchema`. */
export function normalizeInputSchema(input: unknown): JsonSchemaObject {
  const schema = normalizeNullable(isRecord(input) ? input : {});
  delete schema['$schema'];
  if (schema['type'] !== 'object') schema['type'] = 'object';
  if (!isRecord(schema['properties'])) schema['properties'] = {};
  if (!Array.isArray(schema['required'])) schema['required'] = [];
  return schema as JsonSchemaObject;
}
