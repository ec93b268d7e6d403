/**
 * The Tools & approvals view's pure parts: the known tools grouped by risk (built-ins) and by MCP server, the value
 * each policy select shows, and the update request a change sends (a given map replaces the stored one).
 */
import type {
  StandingRuleScope,
  ToolPoliciesResponse,
  ToolPolicy,
  ToolPolicyEntry,
  ToolRisk,
  UpdateToolPoliciesRequest,
} from '@cashcode/contracts';
import { execArgvLabel, TOOL_RISKS } from '@cashcode/contracts';

/** A select's value: an explicit policy, or `inherit` (no entry in the map: the default applies). */
export type PolicyChoice = ToolPolicy | 'inherit';

export interface ToolRow {
  /** the key in `tools`: the built-in name, or `server/tool` */
  key: string;
  /** the name shown (the tool's own name for MCP tools) */
  label: string;
  entry: ToolPolicyEntry;
  choice: PolicyChoice;
  /** what applies when the choice is `inherit` */
  inherited: ToolPolicy;
}

export interface RiskGroup {
  risk: ToolRisk;
  tools: ToolRow[];
}

export interface ServerGroup {
  server: string;
  choice: PolicyChoice;
  inherited: ToolPolicy;
  tools: ToolRow[];
}

/** The `tools` key of a known tool: MCP tools are `server/tool`. */
export function toolKey(entry: ToolPolicyEntry): string {
  if (!entry.server) return entry.name;
  return entry.name.startsWith(`${entry.server}/`) ? entry.name : `${entry.server}/${entry.name}`;
}

function toolLabel(entry: ToolPolicyEntry): string {
  if (!entry.server) return entry.name;
  return entry.name.startsWith(`${entry.server}/`) ? entry.name.slice(entry.server.length + 1) : entry.name;
}

function row(policies: ToolPoliciesResponse, entry: ToolPolicyEntry, inherited: ToolPolicy): ToolRow {
  const key = toolKey(entry);
  const explicit = policies.tools[key];
  return { key, label: toolLabel(entry), entry, choice: explicit ?? 'inherit', inherited };
}

const byLabel = (a: ToolRow, b: ToolRow) => a.label.localeCompare(b.label);

/** Built-in tools by risk class (in the order of TOOL_RISKS), each group sorted by name; empty groups left out. */
export function builtinGroups(policies: ToolPoliciesResponse): RiskGroup[] {
  return TOOL_RISKS.map((risk) => ({
    risk,
    tools: policies.known_tools
      .filter((entry) => !entry.server && entry.risk === risk)
      .map((entry) => row(policies, entry, policies.defaults[risk]))
      .sort(byLabel),
  })).filter((group) => group.tools.length > 0);
}

/** MCP servers (connected ones and those with a stored policy), sorted, each with its tools. */
export function serverGroups(policies: ToolPoliciesResponse): ServerGroup[] {
  const names = new Set<string>(Object.keys(policies.servers));
  for (const entry of policies.known_tools) if (entry.server) names.add(entry.server);
  return [...names].sort().map((server) => {
    const serverPolicy = policies.servers[server];
    return {
      server,
      choice: serverPolicy ?? 'inherit',
      inherited: policies.defaults.mcp,
      tools: policies.known_tools
        .filter((entry) => entry.server === server)
        .map((entry) => row(policies, entry, serverPolicy ?? policies.defaults[entry.risk] ?? policies.defaults.mcp))
        .sort(byLabel),
    };
  });
}

function withEntry(map: Record<string, ToolPolicy>, key: string, choice: PolicyChoice): Record<string, ToolPolicy> {
  const next = { ...map };
  if (choice === 'inherit') delete next[key];
  else next[key] = choice;
  return next;
}

export function toolPolicyChange(policies: ToolPoliciesResponse, key: string, choice: PolicyChoice): UpdateToolPoliciesRequest {
  return { tools: withEntry(policies.tools, key, choice) };
}

export function serverPolicyChange(policies: ToolPoliciesResponse, server: string, choice: PolicyChoice): UpdateToolPoliciesRequest {
  return { servers: withEntry(policies.servers, server, choice) };
}

export function defaultPolicyChange(policies: ToolPoliciesResponse, risk: ToolRisk, policy: ToolPolicy): UpdateToolPoliciesRequest {
  return { defaults: { ...policies.defaults, [risk]: policy } };
}

/** The params of a scope for the `rules.scope.*` strings. */
export function scopeParams(scope: StandingRuleScope): Record<string, string> {
  switch (scope.kind) {
    case 'exec_program':
      return { program: scope.program };
    case 'exec_command':
      return { command: execArgvLabel(scope.argv) };
    case 'tool':
      return { tool: scope.tool };
    case 'mcp_tool':
      return { server: scope.server, tool: scope.tool };
  }
}

/** "1–20 of 45" bounds of an audit page (0–0 when empty). */
export function pageRange(offset: number, count: number, total: number): { from: number; to: number; total: number } {
  if (count === 0) return { from: 0, to: 0, total };
  return { from: offset + 1, to: offset + count, total };
}
