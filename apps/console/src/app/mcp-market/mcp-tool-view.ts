/**
 * The tools dialog's pure parts: a tool's title, the badges of the annotations its server declared, and what an
 * agent's call of it does under the tool policies (runs, asks or is blocked).
 */
import type { McpToolRecord, ToolPoliciesResponse, ToolPolicy } from '@cashcode/contracts';

export type McpToolBadge = 'readOnly' | 'destructive' | 'idempotent' | 'openWorld';

const BADGE_HINTS: ReadonlyArray<[McpToolBadge, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint']> = [
  ['readOnly', 'readOnlyHint'],
  ['destructive', 'destructiveHint'],
  ['idempotent', 'idempotentHint'],
  ['openWorld', 'openWorldHint'],
];

/** The tool's display title (`title`, else `annotations.title`), or null when it has none besides its name. */
export function toolTitle(tool: McpToolRecord): string | null {
  const title = (tool.title ?? tool.annotations?.title ?? '').trim();
  return title === '' || title === tool.original_name ? null : title;
}

/** One badge per hint the server declared `true`, in a fixed order (undeclared or `false` hints show none). */
export function toolBadges(tool: McpToolRecord): McpToolBadge[] {
  const annotations = tool.annotations;
  if (!annotations) return [];
  return BADGE_HINTS.filter(([, hint]) => annotations[hint] === true).map(([badge]) => badge);
}

/** The key of an MCP tool in the tool policies (`tools`, `known_tools[].name`). */
export function policyKey(server: string, tool: McpToolRecord): string {
  return `${server}/${tool.original_name}`;
}

export interface ToolApproval {
  policy: ToolPolicy;
  /**
   * `policy`: read from the tool policies (its `known_tools` entry, else its explicit, server or default policy);
   * `hint`: the policies could not be read, so the built-in default for its risk class (read-only runs, others ask).
   */
  source: 'policy' | 'hint';
}

/**
 * What an agent's call of the tool does: the effective policy of `known_tools` (`server/tool`), else the stored
 * policies resolved like the server does (tool, then server, then the default of its risk class: `read` for
 * read-only tools, else `mcp`), else without policies the defaults (read-only runs without asking, the rest asks).
 */
export function toolApproval(server: string, tool: McpToolRecord, policies: ToolPoliciesResponse | null): ToolApproval {
  const readOnly = tool.annotations?.readOnlyHint === true;
  if (!policies) return { policy: readOnly ? 'allow' : 'ask', source: 'hint' };
  const key = policyKey(server, tool);
  const known = policies.known_tools.find((entry) => entry.name === key);
  if (known) return { policy: known.policy, source: 'policy' };
  const policy = policies.tools[key] ?? policies.servers[server] ?? policies.defaults[readOnly ? 'read' : 'mcp'] ?? 'ask';
  return { policy, source: 'policy' };
}
