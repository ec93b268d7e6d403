/**
 * `POST /api/mcp/servers/import` (openspec mcp "Requirement: Import of client configurations"): reads the JSON users
 * already have — Claude Desktop and Claude Code (`{"mcpServers": {name: entry}}`, Claude Code's `type` `stdio`/`sse`/
 * `http`) and VS Code (`{"servers": {name: entry}}` with `inputs` and `${input:…}` placeholders) — into candidate user
 * entries. Pure: the service validates and creates them and reports what it skipped.
 */
import { isRecord, type McpImportSkipped } from '@cashcode/contracts';
import { McpError } from './mcp.errors';

export interface ImportCandidate {
  /** the name as written in the file */
  sourceName: string;
  /** the server name to create (lowercased; invalid names are reported by validation) */
  name: string;
  body: Record<string, unknown>;
}

export interface ImportPlan {
  candidates: ImportCandidate[];
  skipped: McpImportSkipped[];
}

export const MCP_IMPORT_MESSAGES = {
  shape: 'config must be an object with "mcpServers" (Claude Desktop, Claude Code) or "servers" (VS Code)',
  entry: 'the entry must be an object',
  unsupported: (type: string) => `unsupported transport type '${type}'`,
  input: (where: string) =>
    `${where} uses a \${input:…} placeholder (VS Code prompts for it); add the server by hand and enter the value`,
} as const;

const INPUT_PLACEHOLDER = /\$\{input:[^}]*\}/;
const KNOWN_TYPES = new Set(['stdio', 'sse', 'http', 'streamable_http', 'streamableHttp']);

/** The first `${input:…}` placeholder among an entry's strings, as `field` (e.g. `env.API_KEY`), or null. */
function placeholderField(entry: Record<string, unknown>): string | null {
  for (const key of ['command', 'url', 'cwd'] as const) {
    const value = entry[key];
    if (typeof value === 'string' && INPUT_PLACEHOLDER.test(value)) return key;
  }
  const args = entry['args'];
  if (Array.isArray(args)) {
    const index = args.findIndex((arg) => typeof arg === 'string' && INPUT_PLACEHOLDER.test(arg));
    if (index >= 0) return `args[${index}]`;
  }
  for (const key of ['env', 'headers'] as const) {
    const map = entry[key];
    if (!isRecord(map)) continue;
    for (const [name, value] of Object.entries(map)) {
      if (typeof value === 'string' && INPUT_PLACEHOLDER.test(value)) return `${key}.${name}`;
    }
  }
  return null;
}

/** Turns a client configuration into candidates and skipped entries; 422 on `config` when it has neither key. */
export function planImport(config: unknown): ImportPlan {
  if (!isRecord(config)) throw new McpError('validation', MCP_IMPORT_MESSAGES.shape, 'config');
  const servers = isRecord(config['mcpServers']) ? config['mcpServers'] : isRecord(config['servers']) ? config['servers'] : null;
  if (servers === null) throw new McpError('validation', MCP_IMPORT_MESSAGES.shape, 'config');
  const plan: ImportPlan = { candidates: [], skipped: [] };
  for (const [sourceName, raw] of Object.entries(servers)) {
    if (!isRecord(raw)) {
      plan.skipped.push({ name: sourceName, reason: 'invalid', detail: MCP_IMPORT_MESSAGES.entry });
      continue;
    }
    const rawType = typeof raw['type'] === 'string' ? raw['type'] : typeof raw['command'] === 'string' ? 'stdio' : 'http';
    if (!KNOWN_TYPES.has(rawType)) {
      plan.skipped.push({ name: sourceName, reason: 'unsupported_type', detail: MCP_IMPORT_MESSAGES.unsupported(rawType) });
      continue;
    }
    const field = placeholderField(raw);
    if (field !== null) {
      plan.skipped.push({ name: sourceName, reason: 'input_placeholder', detail: MCP_IMPORT_MESSAGES.input(field) });
      continue;
    }
    const type = rawType === 'stdio' ? 'stdio' : rawType === 'sse' ? 'sse' : 'streamable_http';
    const body: Record<string, unknown> = { type, display_name: sourceName };
    if (typeof raw['description'] === 'string') body['description'] = raw['description'];
    if (type === 'stdio') {
      for (const key of ['command', 'args', 'env', 'cwd'] as const) if (raw[key] !== undefined) body[key] = raw[key];
    } else {
      for (const key of ['url', 'headers'] as const) if (raw[key] !== undefined) body[key] = raw[key];
    }
    plan.candidates.push({ sourceName, name: sourceName.trim().toLowerCase(), body });
  }
  return plan;
}
