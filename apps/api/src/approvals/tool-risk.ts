/**
 * The risk class of every tool: `read` (no side effects), `write` (files, memory, Skills), `network` (reaches the
 * internet), `exec` (shell commands) and `mcp` (MCP server tools not annotated `readOnlyHint`). `memory_write` is no
 * tool's own class: it is that of a memory or Skill write made while the turn's context holds untrusted content
 * (call-evaluation.ts).
 *
 * Built-in tools are classified by name (a test replacing a built-in keeps its class); an MCP wrapper by its
 * server's annotations; any other tool by its `readOnly` flag (`read`, else `write`).
 */
import type { ToolRisk } from '@cashcode/contracts';
import type { AgentTool } from '../agent/agent-tool';

export const EXEC_TOOL = 'exec';

export const BUILTIN_TOOL_RISKS: Readonly<Record<string, ToolRisk>> = {
  list_dir: 'read',
  read_file: 'read',
  glob: 'read',
  grep: 'read',
  session_search: 'read',
  read_artifact: 'read',
  skill_search: 'read',
  skill_load: 'read',
  skill_read_resource: 'read',
  tool_search: 'read',
  mcp_prepare: 'read',
  mcp_list_resources: 'read',
  mcp_read_resource: 'read',
  // the call itself does nothing: each call of its sub-agent passes the gate with its own risk (openspec subagents)
  delegate: 'read',
  write_file: 'write',
  edit_file: 'write',
  save_memory: 'write',
  agent_skill_manage: 'write',
  web_fetch: 'network',
  web_search: 'network',
  // reading pages; a click that submits a form or acts outside the allowed domains is `browser_action` (call-evaluation.ts)
  browser: 'network',
  exec: 'exec',
  schedule_task: 'schedule_task',
};

/** The tool whose calls always ask the owner (risk `schedule_task`): the agent proposing an automation. */
export const SCHEDULE_TASK_TOOL = 'schedule_task';

/**
 * Built-in tools that write long-term memory or a Skill: risk `memory_write` (the owner is asked) when the turn's context
 * holds untrusted content that no trusted source covers (ApprovalsService.gate, trusted-sources.ts). schedule_task is not
 * here: it always asks (risk `schedule_task`), and its card names the untrusted sources too.
 */
export const MEMORY_WRITING_TOOLS: ReadonlySet<string> = new Set(['save_memory', 'agent_skill_manage']);

export function toolRisk(tool: AgentTool): ToolRisk {
  if (tool.mcp) return tool.mcp.readOnly ? 'read' : 'mcp';
  return BUILTIN_TOOL_RISKS[tool.name] ?? (tool.readOnly ? 'read' : 'write');
}

/** The key of a tool in the policy's `tools` map: the built-in name, or `<server>/<tool>` for an MCP tool. */
export function policyKey(tool: AgentTool): string {
  return tool.mcp ? `${tool.mcp.server}/${tool.mcp.tool}` : tool.name;
}
