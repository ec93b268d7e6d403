/**
 * Tool policies and approvals: the user decides before a dangerous tool runs.
 *
 * Every tool has a risk class and a policy (`allow` | `ask` | `deny`). A call whose policy is `ask` waits for an
 * `approval` frame from a client attached to the chat; the server announces it with `approval_request` and settles it
 * with `approval_resolved`. These names are part of the public protocol: other clients rely on them.
 */

import type { BrowserActionDetail } from './browser';
import type { ProposedAutomation } from './automations';
import type { UntrustedSource } from './memory';
import type { TrustedSourceAuditRecord } from './memory-trust';
import type { SubagentRef } from './subagents';

/**
 * `memory_write` (additive) is no tool's own class: it is the risk of a call that writes long-term memory or a Skill
 * (`save_memory`, `agent_skill_manage`) in a turn whose context holds untrusted content; its default asks the owner.
 * `browser_action` (additive) is no tool's own class either: it is the risk of a `browser` call that submits a form or
 * acts on a page outside the allowed domains; its default asks the owner.
 */
export type ToolRisk = 'read' | 'write' | 'network' | 'exec' | 'mcp' | 'memory_write' | 'schedule_task' | 'browser_action';
/**
 * `schedule_task` (additive): the agent proposes an automation; it always asks the owner (a `deny` policy refuses it,
 * no policy, rule or Skill allows it unasked).
 */
export const TOOL_RISKS: readonly ToolRisk[] = ['read', 'write', 'network', 'exec', 'mcp', 'memory_write', 'schedule_task', 'browser_action'];

export type ToolPolicy = 'allow' | 'ask' | 'deny';
export const TOOL_POLICIES: readonly ToolPolicy[] = ['allow', 'ask', 'deny'];

export type ApprovalDecision = 'allow_once' | 'allow_always' | 'deny';
export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = ['allow_once', 'allow_always', 'deny'];

/** Who settled an approval: the user, a policy or standing rule, the expiry timer, or a cancel/stop/restart. */
export type ApprovalResolver = 'user' | 'policy' | 'timeout' | 'cancel';

// ---- WebSocket ------------------------------------------------------------------------------

/** client → server: the user's answer to a pending `approval_request`. */
export interface ApprovalFrame {
  type: 'approval';
  chat_id: string;
  call_id: string;
  decision: ApprovalDecision;
}

/** server → client: a call with policy `ask` is waiting for the user. Re-sent to every client that attaches. */
export interface ApprovalRequestEvent {
  event: 'approval_request';
  chat_id: string;
  call_id: string;
  tool: string;
  risk: ToolRisk;
  /**
   * the call's argument JSON exactly as the model sent it, never redacted or shortened: the owner approves the bytes
   * that will run (redaction is for logs, the audit file and what the model is told)
   */
  arguments: string;
  /** ISO 8601 with offset: when the request is denied by timeout */
  expires_at: string;
  /**
   * additive: the scope an `allow_always` would store, e.g. `{ kind: 'exec_program', program: 'ls' }` or
   * `{ kind: 'exec_command', argv: ['git', 'status'] }`; absent when the decision would apply once
   */
  always_scope?: StandingRuleScope;
  /** additive: for exec, whether the command runs confined in the sandbox */
  sandboxed?: boolean;
  /** additive: for exec, the working directory the call asks for (e.g. `/skills/<name>`); absent: the workspace */
  cwd?: string;
  /** additive: for exec, the command line exactly as it will be given to the shell */
  command?: string;
  /**
   * additive: for exec, every separate command the line runs, as UTF-16 offsets into `command` (end exclusive), in
   * order; absent when the line could not be analysed (then `unanalysed` says why)
   */
  commands?: ExecCommandSpan[];
  /** additive: for exec, why the line could not be split into commands (no standing rule can cover it) */
  unanalysed?: string;
  /** additive: MCP server of an MCP tool */
  server?: string;
  /** additive: MCP `destructiveHint` */
  destructive?: boolean;
  /** additive, risk `memory_write`: the untrusted content in the model's context, each named (URL, server/tool, …) */
  untrusted_sources?: UntrustedSource[];
  /** additive, risk `memory_write` of save_memory: the text that would be added to MEMORY.md */
  memory_entry?: string;
  /** additive, risk `schedule_task`: the automation the agent proposes */
  automation?: ProposedAutomation;
  /** additive: the call is a sub-agent's (openspec subagents): the parent's `delegate` call and the child's task */
  subagent?: SubagentRef;
  /** additive, risk `browser_action`: the action, the element and the page */
  browser?: BrowserActionDetail;
}

/** One command of an exec line: its program and where it stands in the line. */
export interface ExecCommandSpan {
  program: string;
  start: number;
  end: number;
}

/** server → client: the approval was settled (the call runs, or the model is told it was denied). */
export interface ApprovalResolvedEvent {
  event: 'approval_resolved';
  chat_id: string;
  call_id: string;
  decision: ApprovalDecision;
  by: ApprovalResolver;
}

// ---- REST: /api/settings/tool-policies --------------------------------------------------------

/**
 * What a standing rule ("always allow") covers. `exec_program`: that program with any arguments (only for programs
 * that run no other code through their options; a stored rule for any other program covers nothing and carries
 * `inactive_reason`); `exec_command` (additive): a simple command whose words, after quote removal, are exactly `argv`.
 */
export type StandingRuleScope =
  | { kind: 'exec_program'; program: string }
  | { kind: 'exec_command'; argv: string[] }
  | { kind: 'tool'; tool: string }
  | { kind: 'mcp_tool'; server: string; tool: string };

export interface StandingRule {
  id: string;
  scope: StandingRuleScope;
  /** ISO 8601 with offset */
  created_at: string;
  /** additive, in responses only: why the stored rule covers nothing any more (it stays until revoked) */
  inactive_reason?: string;
}

/**
 * The words of an `exec_command` rule as a shell line for display: words of plain characters as they are, any other
 * word single-quoted (`git commit -m 'a b'`).
 */
export function execArgvLabel(argv: readonly string[]): string {
  return argv
    .map((word) => (word !== '' && /^[\w./,:@%+=-]+$/.test(word) ? word : `'${word.split("'").join("'\\''")}'`))
    .join(' ');
}

export interface ToolPolicyEntry {
  name: string;
  risk: ToolRisk;
  /** the policy in force: the explicit one, else the default for its risk */
  policy: ToolPolicy;
  /** true when `policy` comes from `tools[name]` rather than a default */
  explicit: boolean;
  /** MCP tools: the server it belongs to */
  server?: string;
  /** MCP tools: annotations as the server declared them */
  read_only?: boolean;
  destructive?: boolean;
  title?: string;
}

export interface ToolPoliciesResponse {
  /** the policy per risk class when no tool or server policy applies */
  defaults: Record<ToolRisk, ToolPolicy>;
  /** explicit per-tool policies (built-in tool name, or `server/tool` for MCP tools) */
  tools: Record<string, ToolPolicy>;
  /** explicit per-MCP-server policies (apply to every tool of that server without a per-tool policy) */
  servers: Record<string, ToolPolicy>;
  rules: StandingRule[];
  /** the known tools with their effective policy (built-ins and the tools of connected MCP servers) */
  known_tools: ToolPolicyEntry[];
}

/**
 * `PUT /api/settings/tool-policies`: every field optional; a given map replaces the stored one. `rules` may only
 * remove rules (send the ids to keep); rules are created by `allow_always` decisions.
 */
export interface UpdateToolPoliciesRequest {
  defaults?: Partial<Record<ToolRisk, ToolPolicy>>;
  tools?: Record<string, ToolPolicy>;
  servers?: Record<string, ToolPolicy>;
  /** ids of the standing rules to keep (omit to keep all) */
  keep_rule_ids?: string[];
}

// ---- REST: /api/approvals/audit ----------------------------------------------------------------

export interface ApprovalAuditEntry {
  /** ISO 8601 with offset */
  at: string;
  chat_id: string;
  call_id: string;
  tool: string;
  risk: ToolRisk;
  decision: ApprovalDecision;
  by: ApprovalResolver;
  /** redacted, truncated preview of the command or arguments */
  preview: string;
  server?: string;
  /**
   * additive: a Skill pre-approval grant or revocation by the owner (`decision` allow_always / deny, `by` user,
   * `tool` = `skill_pre_approvals`, empty chat and call ids); absent for tool-call decisions
   */
  skill_grant?: SkillGrantAuditRecord;
  /** additive: the owner trusted or stopped trusting a source (`tool` = `trusted_sources`, empty chat and call ids) */
  trusted_source?: TrustedSourceAuditRecord;
  /** additive: the call was a sub-agent's (openspec subagents): the parent's `delegate` call and the child's task */
  subagent?: SubagentRef;
}

/** What a grant or revocation of a Skill's pre-approvals concerned (in the approvals audit). */
export interface SkillGrantAuditRecord {
  action: 'grant' | 'revoke';
  name: string;
  source: 'builtin' | 'user' | 'agent';
  /** the package content hash granted (or the one whose grant was revoked) */
  hash: string;
  allowed_tools: string[];
  /** why a grant was revoked: the owner, or the Skill's content changed or it was deleted */
  reason?: 'owner' | 'changed' | 'deleted';
}

export interface ApprovalAuditResponse {
  entries: ApprovalAuditEntry[];
  /** total entries in the log */
  total: number;
  offset: number;
  limit: number;
}

// ---- REST: sandbox state (in GET /api/health as `exec_sandbox`, and GET /api/settings/exec-sandbox) ---------

export type ExecSandboxMode = 'auto' | 'bwrap' | 'off';
export interface ExecSandboxStatus {
  /** the configured mode (CASHCODE_EXEC_SANDBOX) */
  mode: ExecSandboxMode;
  /** true when exec runs confined right now */
  active: boolean;
  /** `bwrap` when active, else null */
  kind: 'bwrap' | null;
  /** network reachable from inside the sandbox */
  network: boolean;
  /** why the sandbox is not active (absent when active) */
  reason?: string;
}
