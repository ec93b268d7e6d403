/**
 * What an automation run may use (openspec automations "Requirement: A run uses only its tools"): the tool subset
 * becomes the turn's ToolAllowlist, enforced by the same registry and gate as every turn — the model neither sees nor
 * can run anything else.
 * - `tools`: the built-in and meta tool names (null: all of them);
 * - `mcp_servers`: the MCP servers whose tools it may use, and the MCP meta tools (`tool_search`, `mcp_prepare`, …)
 *   only with a server of the list (null: all; an empty list: no MCP at all);
 * - `skills`: the Skills it may load (null: all; an empty list: no Skill tools).
 * Names are checked when an automation is saved (unknown → a clear problem) and again when a run starts (a name that
 * vanished since ends the run with a recorded error).
 */
import type { AutomationInput } from '@cashcode/contracts';
import type { AgentTool } from '../agent/agent-tool';
import { MCP_TOOL_PREFIX, type ToolAllowlist } from '../agent/tool-registry';

const MCP_META_TOOLS: ReadonlySet<string> = new Set(['tool_search', 'mcp_prepare', 'mcp_list_resources', 'mcp_read_resource']);
const SKILL_TOOLS: ReadonlySet<string> = new Set(['skill_search', 'skill_load', 'skill_read_resource']);

/** Where the names an automation may use are looked up. */
export interface AutomationCatalog {
  /** built-in and meta tool names (not the MCP wrappers) */
  toolNames(): string[];
  mcpServerNames(): string[];
  skillExists(name: string): Promise<boolean>;
}

export type SubsetField = 'tools' | 'mcp_servers' | 'skills';
export interface UnknownName {
  field: SubsetField;
  name: string;
}

/** Whether a tool name is one the `tools` subset governs (not MCP, not a Skill tool). */
export function isSubsetTool(name: string): boolean {
  return !name.startsWith(MCP_TOOL_PREFIX) && !MCP_META_TOOLS.has(name) && !SKILL_TOOLS.has(name);
}

/** The names of the subset that do not exist (in field order). */
export async function unknownNames(input: Pick<AutomationInput, SubsetField>, catalog: AutomationCatalog): Promise<UnknownName[]> {
  const unknown: UnknownName[] = [];
  if (input.tools) {
    const known = new Set(catalog.toolNames().filter(isSubsetTool));
    for (const name of input.tools) if (!known.has(name)) unknown.push({ field: 'tools', name });
  }
  if (input.mcp_servers) {
    const known = new Set(catalog.mcpServerNames());
    for (const name of input.mcp_servers) if (!known.has(name)) unknown.push({ field: 'mcp_servers', name });
  }
  for (const name of input.skills ?? []) if (!(await catalog.skillExists(name))) unknown.push({ field: 'skills', name });
  return unknown;
}

export function unknownNameText(unknown: UnknownName): string {
  const what = unknown.field === 'tools' ? 'tool' : unknown.field === 'mcp_servers' ? 'MCP server' : 'Skill';
  return `The ${what} "${unknown.name}" does not exist.`;
}

/** The turn's allowlist of an automation; null when the automation uses everything. */
export function automationAllowlist(input: Pick<AutomationInput, SubsetField>): ToolAllowlist | null {
  const { tools, mcp_servers: servers, skills } = input;
  if (tools === null && servers === null && skills === null) return null;
  const toolSet = tools ? new Set(tools) : null;
  const serverSet = servers ? new Set(servers) : null;
  const skillSet = skills ? new Set(skills) : null;
  const argument = (args: Record<string, unknown> | undefined, key: string): string | undefined =>
    typeof args?.[key] === 'string' ? (args[key] as string) : undefined;
  return {
    allows(tool: AgentTool, args?: Record<string, unknown>): boolean {
      if (tool.mcp) return serverSet === null || serverSet.has(tool.mcp.server);
      if (MCP_META_TOOLS.has(tool.name)) {
        if (serverSet === null) return true;
        if (serverSet.size === 0) return false;
        const server = argument(args, 'server_name');
        return server === undefined || serverSet.has(server);
      }
      if (SKILL_TOOLS.has(tool.name)) {
        if (skillSet === null) return true;
        if (skillSet.size === 0) return false;
        const name = argument(args, 'name');
        return tool.name === 'skill_search' || args === undefined || (name !== undefined && skillSet.has(name));
      }
      return toolSet === null || toolSet.has(tool.name);
    },
    // a deferred tool (browser, schedule_task, delegate) the subset names is offered from the run's first request
    offers(name: string): boolean {
      return toolSet?.has(name) === true;
    },
  };
}
