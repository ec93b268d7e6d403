/**
 * What the gate decides about one tool call before anything is emitted (openspec approvals "Requirement: Policy and
 * precedence"): the effective policy — the tool's explicit policy (`tools[<name>]`, `tools[<server>/<tool>]` for MCP
 * tools), else for MCP tools the server's (`servers[<server>]`), else the default of the tool's risk class — and, for
 * an `ask`, whether a standing rule or a Skill the owner granted already covers it; and what "always allow" would store.
 */
import type { BrowserActionDetail, StandingRule, StandingRuleScope, ToolPolicy, ToolRisk, UntrustedSource } from '@cashcode/contracts';
import type { AgentTool } from '../agent/agent-tool';
import type { ApprovalCall } from '../agent/tool-gate';
import { parseToolArguments } from '../agent/tool-registry';
import { alwaysExecScope, commandCovered, ruleMatchers } from './command-analysis';
import { emptyPreApprovals, toolPreApproved, type PreApprovals } from './skill-pre-approvals';
import type { ToolPolicyState } from './tool-policy-store';
import { EXEC_TOOL, MEMORY_WRITING_TOOLS, policyKey, SCHEDULE_TASK_TOOL, toolRisk } from './tool-risk';

/** Where the Skills loaded in a chat's current turn plug in their `allowed-tools` (SkillTurnService). */
export interface PreApprovalSource {
  preApprovals(chatId: string): PreApprovals | null;
}

/** One call, judged. */
export interface Evaluated {
  call: ApprovalCall;
  name: string;
  risk: ToolRisk;
  server?: string;
  /** exec: the command */
  command?: string;
  policy: ToolPolicy;
  /** for `ask` calls a rule or Skill already approved */
  preApproved: boolean;
  /** risk `memory_write` (and a non-owner's call): the untrusted sources of the turn's context */
  untrustedSources?: UntrustedSource[];
  /** the turn answers someone other than the owner: the owner is asked, nothing standing covers it */
  nonOwner?: true;
  /** risk `browser_action`: the action, element and page the owner approves */
  browser?: BrowserActionDetail;
}

/** The exec command of a call's arguments, when it would run at all. */
function execCommand(rawArguments: string): string | null {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return null;
  const command = parsed.args['command'];
  return typeof command === 'string' && command.trim() !== '' && !command.includes('\0') ? command : null;
}

/** The `cwd` argument of an exec call, when it names one. */
export function execCwd(rawArguments: string): string | undefined {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return undefined;
  const cwd = parsed.args['cwd'];
  return typeof cwd === 'string' && cwd !== '' && cwd !== '.' ? cwd : undefined;
}

export function effectivePolicy(state: Readonly<ToolPolicyState>, tool: AgentTool, risk: ToolRisk): ToolPolicy {
  const explicit = state.tools[policyKey(tool)];
  if (explicit !== undefined) return explicit;
  if (tool.mcp) {
    const server = state.servers[tool.mcp.server];
    if (server !== undefined) return server;
  }
  return state.defaults[risk];
}

/** Whether one of the rules covers the call (for exec: every command of its line). */
export function coveredByRules(evaluated: Evaluated, rules: readonly StandingRule[]): boolean {
  const tool = evaluated.call.tool;
  if (evaluated.command !== undefined) return commandCovered(evaluated.command, ruleMatchers(rules.map((rule) => rule.scope)));
  return rules.some((rule) => {
    if (rule.scope.kind === 'mcp_tool') return tool.mcp?.server === rule.scope.server && tool.mcp.tool === rule.scope.tool;
    if (rule.scope.kind === 'tool') return !tool.mcp && tool.name === rule.scope.tool;
    return false;
  });
}

function coveredBySkills(evaluated: Evaluated, pre: PreApprovals): boolean {
  if (evaluated.command !== undefined) return pre.anyExec || commandCovered(evaluated.command, pre.exec);
  return toolPreApproved(pre, evaluated.call.tool);
}

/**
 * The call judged against the policies, rules and the turn's granted Skills; null when it would not run at all.
 *
 * A turn whose requester is not the owner (a group member's channel message: `requester: 'non_owner'`) cannot use the
 * owner's standing permissions (openspec approvals "Requirement: Non-owner turns ask the owner"): every call that is
 * not read-only asks the owner — an `allow` policy becomes `ask`, no standing rule or Skill pre-approval covers it and
 * "always" is not offered; a `deny` stays `deny`; headless, the ask is a denial.
 */
export function evaluateCall(call: ApprovalCall, state: Readonly<ToolPolicyState>, skills: PreApprovalSource | null): Evaluated | null {
  const evaluated = evaluateOwnerCall(call, state, skills);
  if (evaluated === null || call.requester !== 'non_owner' || evaluated.risk === 'read') return evaluated;
  const untrusted = evaluated.untrustedSources ?? call.untrustedSources ?? [];
  return {
    ...evaluated,
    policy: evaluated.policy === 'deny' ? 'deny' : 'ask',
    preApproved: false,
    nonOwner: true,
    // the card names who asked (the turn's untrusted senders)
    ...(untrusted.length > 0 ? { untrustedSources: [...untrusted] } : {}),
  };
}

function evaluateOwnerCall(call: ApprovalCall, state: Readonly<ToolPolicyState>, skills: PreApprovalSource | null): Evaluated | null {
  const tool = call.tool;
  const risk = toolRisk(tool);
  let command: string | undefined;
  if (tool.name === EXEC_TOOL && !tool.mcp) {
    const parsed = execCommand(call.rawArguments);
    // exec refuses a missing, blank or NUL command itself: nothing would run, nothing to ask
    if (parsed === null) return null;
    command = parsed;
  }
  const untrusted = call.untrustedSources ?? [];
  if (!tool.mcp && MEMORY_WRITING_TOOLS.has(tool.name) && untrusted.length > 0) {
    // a memory or Skill write in a turn whose context holds untrusted content: the owner decides (openspec approvals
    // "Requirement: Untrusted content cannot write memory"); only the class default relaxes it, never a rule or a Skill
    const explicit = state.tools[tool.name];
    const policy = explicit === 'deny' ? 'deny' : state.defaults.memory_write;
    return { call, name: tool.name, risk: 'memory_write', policy, preApproved: false, untrustedSources: [...untrusted] };
  }
  const parsedArgs = tool.escalation && !tool.mcp ? parseToolArguments(call.rawArguments) : null;
  const escalation = parsedArgs?.ok ? (tool.escalation?.(parsedArgs.args, call.chatId) ?? null) : null;
  if (escalation !== null) {
    // a browser action that submits a form or acts outside the allowed domains (openspec browser "Requirement: Actions
    // that ask the owner"): only the class default relaxes it, never a rule or a Skill; a `deny` of the tool wins
    const policy = state.tools[tool.name] === 'deny' ? 'deny' : state.defaults[escalation.risk];
    return { call, name: tool.name, risk: escalation.risk, policy, preApproved: false, browser: escalation.browser };
  }
  if (!tool.mcp && tool.name === SCHEDULE_TASK_TOOL) {
    // the agent proposing an automation always asks the owner (openspec automations "Requirement: The agent proposes,
    // the owner decides"): `deny` refuses it, nothing allows it unasked; invalid arguments ask nothing (the tool refuses)
    const args = parseToolArguments(call.rawArguments);
    if (!args.ok || !tool.approvalDetails?.(args.args)) return null;
    const policy = state.tools[tool.name] === 'deny' || state.defaults.schedule_task === 'deny' ? 'deny' : 'ask';
    // the card names the untrusted sources the turn read, like a memory write's
    return {
      call,
      name: tool.name,
      risk: 'schedule_task',
      policy,
      preApproved: false,
      ...(untrusted.length > 0 ? { untrustedSources: [...untrusted] } : {}),
    };
  }
  const policy = effectivePolicy(state, tool, risk);
  const evaluated: Evaluated = { call, name: tool.name, risk, policy, preApproved: false };
  if (tool.mcp) evaluated.server = tool.mcp.server;
  if (command !== undefined) evaluated.command = command;
  if (policy === 'ask') {
    evaluated.preApproved =
      coveredByRules(evaluated, state.rules) || coveredBySkills(evaluated, skills?.preApprovals(call.chatId) ?? emptyPreApprovals());
  }
  return evaluated;
}

/** What "always allow" would store for the call; undefined when it can only be allowed once. */
export function alwaysScope(evaluated: Evaluated): StandingRuleScope | undefined {
  const tool = evaluated.call.tool;
  // a rule for save_memory would let every later untrusted page write memory unasked; a rule answering a non-owner's
  // call would let the next stranger's call through unasked
  if (evaluated.risk === 'memory_write' || evaluated.risk === 'schedule_task' || evaluated.nonOwner) return undefined;
  // each form submission is its own decision
  if (evaluated.risk === 'browser_action') return undefined;
  if (evaluated.command !== undefined) return alwaysExecScope(evaluated.command) ?? undefined;
  if (tool.mcp) return { kind: 'mcp_tool', server: tool.mcp.server, tool: tool.mcp.tool };
  return { kind: 'tool', tool: tool.name };
}
