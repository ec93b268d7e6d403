/**
 * The skill tools the model sees (spec §11.10): `skill_search`, `skill_load`, `skill_read_resource` (always-visible
 * meta tools) and `agent_skill_manage` (main registry). The rules live in SkillsService; this file holds the tool
 * schemas, the argument checks and the exact result formats (Python-style JSON spacing, three projections).
 */
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent/agent-tool';
import type { SkillsService } from './skills.service';

export const SKILL_SEARCH_TOOL = 'skill_search';
export const SKILL_LOAD_TOOL = 'skill_load';
export const SKILL_READ_RESOURCE_TOOL = 'skill_read_resource';
export const AGENT_SKILL_MANAGE_TOOL = 'agent_skill_manage';
/** tools a loaded Skill's `allowed-tools` never blocks (the model must still be able to use its Skills) */
export const ALWAYS_ALLOWED_TOOLS: ReadonlySet<string> = new Set([SKILL_SEARCH_TOOL, SKILL_LOAD_TOOL, SKILL_READ_RESOURCE_TOOL]);

export const SKILL_SEARCH_DEFAULT_LIMIT = 8;
export const SKILL_SEARCH_MAX_LIMIT = 20;
export const MANAGE_REASON_MAX_CHARS = 500;

/**
 * Tool names of other agents (Claude Code style `allowed-tools`) → this server's tools. `Bash(git:*)` maps to `exec`
 * (the command pattern is not enforced), `Read` to `read_file`, and so on; other names are taken as they are.
 */
const TOOL_ALIASES: Readonly<Record<string, string>> = {
  bash: 'exec',
  shell: 'exec',
  read: 'read_file',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'edit_file',
  ls: 'list_dir',
  glob: 'glob',
  grep: 'grep',
  webfetch: 'web_fetch',
  websearch: 'web_search',
};

/** The server tool names an `allowed-tools` list permits. */
export function resolveAllowedTools(entries: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const entry of entries) {
    const open = entry.indexOf('(');
    const base = (open === -1 ? entry : entry.slice(0, open)).trim();
    if (base === '') continue;
    out.add(TOOL_ALIASES[base.toLowerCase()] ?? base);
  }
  return out;
}

/**
 * JSON with Python's `json.dumps` spacing (`", "` and `": "`); `ascii` escapes non-ASCII like `ensure_ascii=True`.
 */
export function pythonJson(value: unknown, ascii = false): string {
  const encodeString = (text: string): string => {
    const json = JSON.stringify(text);
    return ascii ? json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
  };
  const encode = (item: unknown): string => {
    if (item === null || item === undefined) return 'null';
    if (typeof item === 'string') return encodeString(item);
    if (typeof item === 'number') return Number.isFinite(item) ? String(item) : 'null';
    if (typeof item === 'boolean') return item ? 'true' : 'false';
    if (Array.isArray(item)) return `[${item.map(encode).join(', ')}]`;
    if (typeof item === 'object') {
      const parts = Object.entries(item as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${encodeString(k)}: ${encode(v)}`);
      return `{${parts.join(', ')}}`;
    }
    return encodeString(String(item));
  };
  return encode(value);
}

function schema(properties: Record<string, unknown>, required: string[], additionalProperties = false): JsonSchemaObject {
  return { type: 'object', properties, required, additionalProperties };
}

function asString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export class SkillSearchTool implements AgentTool {
  readonly name = SKILL_SEARCH_TOOL;
  readonly description =
    'Search the local Skills (reusable instructions for specific tasks) by keywords. Returns matching enabled Skills ' +
    'with their name, description and availability. Load one with skill_load before following it.';
  readonly parameters = schema(
    {
      query: { type: 'string', description: 'keywords describing the task' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: SKILL_SEARCH_MAX_LIMIT,
        default: SKILL_SEARCH_DEFAULT_LIMIT,
        description: 'maximum number of results',
      },
    },
    ['query'],
  );
  readonly readOnly = true;

  constructor(private readonly skills: SkillsService) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    const query = asString(args['query']) ?? '';
    if (query.trim() === '') return pythonJson({ skills: [], error: 'query is required' });
    const rawLimit = args['limit'];
    const limit =
      typeof rawLimit === 'number' && Number.isFinite(rawLimit)
        ? Math.min(SKILL_SEARCH_MAX_LIMIT, Math.max(1, Math.floor(rawLimit)))
        : SKILL_SEARCH_DEFAULT_LIMIT;
    const hits = await this.skills.searchForModel(query, limit);
    return pythonJson({ query, skills: hits });
  }
}

export class SkillLoadTool implements AgentTool {
  readonly name = SKILL_LOAD_TOOL;
  readonly description =
    'Load a Skill by its exact name to get its full instructions for the current turn. Required MCP servers are ' +
    'connected and their tools become available. Bodies are valid for the current turn only.';
  readonly parameters = schema({ name: { type: 'string', description: 'the exact Skill name' } }, ['name']);
  readonly readOnly = false;

  constructor(private readonly skills: SkillsService) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const name = (asString(args['name']) ?? '').trim();
    return this.skills.loadForModel(name, ctx);
  }
}

export class SkillReadResourceTool implements AgentTool {
  readonly name = SKILL_READ_RESOURCE_TOOL;
  readonly description =
    'Read a supporting file (e.g. references/guide.md, templates/chart.html) of a Skill loaded in this turn. ' +
    'The path is relative to the Skill package.';
  readonly parameters = schema(
    {
      name: { type: 'string', description: 'the Skill name' },
      path: { type: 'string', description: 'package-relative path of the file' },
    },
    ['name', 'path'],
  );
  readonly readOnly = true;

  constructor(private readonly skills: SkillsService) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const name = (asString(args['name']) ?? '').trim();
    const path = asString(args['path']) ?? '';
    return this.skills.readResourceForModel(name, path, ctx);
  }
}

export class AgentSkillManageTool implements AgentTool {
  readonly name = AGENT_SKILL_MANAGE_TOOL;
  readonly description =
    'Create a new agent-owned Skill package (load the skill-creator Skill first for the authoring rules). ' +
    'Only action "create" is supported. Report success only when the result has "success": true.';
  readonly parameters = schema(
    {
      action: { type: 'string', enum: ['create'] },
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', description: 'Skill name (package directory)' },
      content: { type: 'string', description: 'the full SKILL.md (YAML frontmatter + body)' },
      support_files: {
        type: 'object',
        additionalProperties: { type: 'string' },
        maxProperties: 64,
        description: 'package-relative path -> text, e.g. {"references/notes.md": "..."}',
      },
      reason: { type: 'string', maxLength: MANAGE_REASON_MAX_CHARS, description: 'why this Skill is created' },
    },
    ['action', 'name', 'content'],
  );
  readonly readOnly = false;

  constructor(private readonly skills: SkillsService) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    return pythonJson(await this.skills.manageForModel(args));
  }
}
