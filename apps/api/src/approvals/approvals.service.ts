/**
 * Tool policies and approvals: before a tool call runs, its effective policy is decided; an `ask` call waits for the
 * user's `approval` frame.
 *
 * Effective policy of a call (first match wins):
 *  1. the tool's explicit policy (`tools[<name>]`, `tools[<server>/<tool>]` for MCP tools),
 *  2. for MCP tools, the server's policy (`servers[<server>]`),
 *  3. the default of the tool's risk class (`defaults[<risk>]`: exec and mcp ask, the rest allow).
 * `deny` never runs and is never overridden. `ask` becomes allow (by `policy`) when a standing rule covers the call
 * or a Skill loaded in the turn pre-approves it (`allowed-tools`); otherwise an `approval_request` goes to the chat and
 * the call waits for `allow_once`, `allow_always` (also stores a standing rule) or `deny`, until it expires
 * (CASHCODE_APPROVAL_TIMEOUT_SEC → deny by `timeout`) or the turn is cancelled or the server stops (deny by `cancel`).
 *
 * Every decision (user, policy, timeout, cancel) is appended to the audit log before it takes effect and announced
 * with `approval_resolved`; a plain `allow` is no decision and produces no event.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type {
  ApprovalAuditEntry,
  ApprovalDecision,
  ApprovalRequestEvent,
  ApprovalResolver,
  StandingRule,
  StandingRuleScope,
  ToolPoliciesResponse,
  ToolPolicy,
  ToolPolicyEntry,
  ToolRisk,
  UpdateToolPoliciesRequest,
} from '@cashcode/contracts';
import type { AgentTool } from '../agent/agent-tool';
import type { ApprovalCall, ApprovalEmitter, ApprovalGate, ApprovalVerdict, ToolGate } from '../agent/tool-gate';
import { argumentPreview } from '../agent/argument-preview';
import { parseToolArguments, ToolRegistry } from '../agent/tool-registry';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { redactSecrets } from '../common/redact';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApprovalAuditLog } from './approval-audit';
import { alwaysExecScope, commandCovered, commandSegments, ruleInactiveReason, ruleMatchers } from './command-analysis';
import { ExecSandboxService } from '../agent/sandbox/exec-sandbox.service';
import { emptyPreApprovals, toolPreApproved, type PreApprovals } from './skill-pre-approvals';
import { newRuleId, sameScope, ToolPolicyStore, type ToolPolicyState } from './tool-policy-store';
import { EXEC_TOOL, policyKey, toolRisk } from './tool-risk';

/** characters of the command or arguments in an audit entry and in the model's denial text */
export const AUDIT_PREVIEW_MAX_CHARS = 500;

/** Where the Skills loaded in a chat's current turn plug in their `allowed-tools` (SkillTurnService). */
export interface PreApprovalSource {
  preApprovals(chatId: string): PreApprovals | null;
}

/** What the model gets for an `ask` call of a headless turn (openspec openai-compat). */
export function headlessDenial(tool: string): string {
  return (
    `The tool \`${tool}\` needs approval; headless clients (the OpenAI-compatible API) cannot approve, so the call ` +
    'did not run. To use it from this client, allow the tool in Tools & approvals.'
  );
}

export type DecideResult = { ok: true } | { ok: false; code: 'unknown_approval' | 'approval_failed'; detail: string };

interface Evaluated {
  call: ApprovalCall;
  name: string;
  risk: ToolRisk;
  server?: string;
  /** exec: the command */
  command?: string;
  policy: ToolPolicy;
  /** for `ask` calls a rule or Skill already approved */
  preApproved: boolean;
}

interface Pending {
  evaluated: Evaluated;
  event: ApprovalRequestEvent;
  emitter: ApprovalEmitter;
  expiresAt: number;
  /** a decision is being applied (or was): later frames are unknown */
  claimed: boolean;
  timer: NodeJS.Timeout | null;
  signal: AbortSignal;
  onAbort: () => void;
  resolve: (verdict: ApprovalVerdict) => void;
}

const PLAIN_ALLOW: ApprovalGate = { plainAllow: true, open: () => Promise.resolve({ run: true }) };

function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function pendingKey(chatId: string, callId: string): string {
  return `${chatId}\u0000${callId}`;
}

/** The exec command of a call's arguments, when it would run at all. */
function execCommand(rawArguments: string): string | null {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return null;
  const command = parsed.args['command'];
  return typeof command === 'string' && command.trim() !== '' && !command.includes('\0') ? command : null;
}

/** The `cwd` argument of an exec call, when it names one. */
function execCwd(rawArguments: string): string | undefined {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return undefined;
  const cwd = parsed.args['cwd'];
  return typeof cwd === 'string' && cwd !== '' && cwd !== '.' ? cwd : undefined;
}

function localIso(ms: number): string {
  const date = new Date(ms);
  const pad = (value: number, size = 2): string => String(value).padStart(size, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

@Injectable()
export class ApprovalsService implements ToolGate, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ApprovalsService.name);
  private readonly pending = new Map<string, Pending>();
  private preApprovalSource: PreApprovalSource | null = null;
  private stopping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly policies: ToolPolicyStore,
    private readonly audit: ApprovalAuditLog,
    private readonly registry: ToolRegistry,
    private readonly sandbox: ExecSandboxService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.policies.load();
  }

  onApplicationShutdown(): void {
    this.stopping = true;
    for (const pending of [...this.pending.values()]) this.settleIfOpen(pending, 'cancel');
  }

  /** Plugs in the Skills' per-turn pre-approvals. */
  setPreApprovalSource(source: PreApprovalSource | null): void {
    this.preApprovalSource = source;
  }

  // ------------------------------------------------------------------------------------------ gate

  /** The gate of one call (synchronous evaluation; nothing is emitted until `open`). */
  gate(call: ApprovalCall): ApprovalGate {
    const evaluated = this.evaluate(call);
    if (evaluated === null || (evaluated.policy === 'allow' && !evaluated.preApproved)) return PLAIN_ALLOW;
    let opened: Promise<ApprovalVerdict> | null = null;
    return {
      plainAllow: false,
      open: (emitter, signal) => (opened ??= this.open(evaluated, emitter, signal)),
    };
  }

  /** The pending requests of a chat (re-sent to a client that attaches). */
  pendingRequests(chatId: string): ApprovalRequestEvent[] {
    return [...this.pending.values()]
      .filter((pending) => pending.evaluated.call.chatId === chatId && !pending.claimed)
      .map((pending) => ({ ...pending.event }));
  }

  /** The user's answer to a pending request. */
  async decide(chatId: string, callId: string, decision: ApprovalDecision): Promise<DecideResult> {
    const pending = this.pending.get(pendingKey(chatId, callId));
    if (!pending || pending.claimed) {
      return { ok: false, code: 'unknown_approval', detail: `No approval is pending for call ${JSON.stringify(callId)} in this chat.` };
    }
    pending.claimed = true;
    let applied: ApprovalDecision = decision;
    let rule: StandingRule | null = null;
    if (decision === 'allow_always') {
      const scope = pending.event.always_scope;
      if (scope === undefined) applied = 'allow_once';
      else {
        try {
          rule = await this.addRule(scope);
        } catch (error) {
          pending.claimed = false;
          this.logger.error(formatEvent('approval.rule.save_failed', { error: (error as NodeJS.ErrnoException).code ?? 'error' }));
          // the timer or the cancel may have fired meanwhile
          if (pending.signal.aborted || this.stopping) this.settleIfOpen(pending, 'cancel');
          else if (Date.now() >= pending.expiresAt) this.settleIfOpen(pending, 'timeout');
          return { ok: false, code: 'approval_failed', detail: 'The standing rule could not be saved; nothing was decided. Answer again.' };
        }
      }
    }
    await this.finish(pending, applied, 'user');
    if (rule !== null) {
      // the new rule also answers the other pending requests it covers
      for (const other of [...this.pending.values()]) {
        if (!other.claimed && other.evaluated.policy === 'ask' && this.coveredByRules(other.evaluated, [rule])) {
          other.claimed = true;
          await this.finish(other, 'allow_once', 'policy');
        }
      }
    }
    return { ok: true };
  }

  private evaluate(call: ApprovalCall): Evaluated | null {
    const tool = call.tool;
    const risk = toolRisk(tool);
    let command: string | undefined;
    if (tool.name === EXEC_TOOL && !tool.mcp) {
      const parsed = execCommand(call.rawArguments);
      // exec refuses a missing, blank or NUL command itself: nothing would run, nothing to ask
      if (parsed === null) return null;
      command = parsed;
    }
    const state = this.policies.current;
    const policy = this.effectivePolicy(state, tool, risk);
    const evaluated: Evaluated = { call, name: tool.name, risk, policy, preApproved: false };
    if (tool.mcp) evaluated.server = tool.mcp.server;
    if (command !== undefined) evaluated.command = command;
    if (policy === 'ask') {
      evaluated.preApproved = this.coveredByRules(evaluated, state.rules) || this.coveredBySkills(evaluated);
    }
    return evaluated;
  }

  private effectivePolicy(state: Readonly<ToolPolicyState>, tool: AgentTool, risk: ToolRisk): ToolPolicy {
    const explicit = state.tools[policyKey(tool)];
    if (explicit !== undefined) return explicit;
    if (tool.mcp) {
      const server = state.servers[tool.mcp.server];
      if (server !== undefined) return server;
    }
    return state.defaults[risk];
  }

  private coveredByRules(evaluated: Evaluated, rules: readonly StandingRule[]): boolean {
    const tool = evaluated.call.tool;
    if (evaluated.command !== undefined) return commandCovered(evaluated.command, ruleMatchers(rules.map((rule) => rule.scope)));
    return rules.some((rule) => {
      if (rule.scope.kind === 'mcp_tool') return tool.mcp?.server === rule.scope.server && tool.mcp.tool === rule.scope.tool;
      if (rule.scope.kind === 'tool') return !tool.mcp && tool.name === rule.scope.tool;
      return false;
    });
  }

  private coveredBySkills(evaluated: Evaluated): boolean {
    const pre = this.preApprovalSource?.preApprovals(evaluated.call.chatId) ?? emptyPreApprovals();
    if (evaluated.command !== undefined) return pre.anyExec || commandCovered(evaluated.command, pre.exec);
    return toolPreApproved(pre, evaluated.call.tool);
  }

  private alwaysScope(evaluated: Evaluated): StandingRuleScope | undefined {
    const tool = evaluated.call.tool;
    if (evaluated.command !== undefined) return alwaysExecScope(evaluated.command) ?? undefined;
    if (tool.mcp) return { kind: 'mcp_tool', server: tool.mcp.server, tool: tool.mcp.tool };
    return { kind: 'tool', tool: tool.name };
  }

  /** Redacted command (exec) or argument preview (others), for the audit log and the model's denial text. */
  private preview(evaluated: Evaluated): string {
    if (evaluated.command !== undefined) {
      const cwd = execCwd(evaluated.call.rawArguments);
      const shown = cwd === undefined ? evaluated.command : `(cwd ${cwd}) ${evaluated.command}`;
      return truncate(redactSecrets(shown), AUDIT_PREVIEW_MAX_CHARS);
    }
    return argumentPreview(evaluated.call.rawArguments);
  }

  private open(evaluated: Evaluated, emitter: ApprovalEmitter, signal: AbortSignal): Promise<ApprovalVerdict> {
    const { call } = evaluated;
    if (evaluated.policy === 'deny' || evaluated.preApproved) {
      const decision: ApprovalDecision = evaluated.policy === 'deny' ? 'deny' : 'allow_once';
      return this.record(evaluated, decision, 'policy').then(() => {
        emitter.resolved({ event: 'approval_resolved', chat_id: call.chatId, call_id: call.callId, decision, by: 'policy' });
        return this.verdict(evaluated, decision, 'policy');
      });
    }
    if (call.headless === true) {
      return this.record(evaluated, 'deny', 'policy').then(() => {
        emitter.resolved({ event: 'approval_resolved', chat_id: call.chatId, call_id: call.callId, decision: 'deny', by: 'policy' });
        return { run: false, model: headlessDenial(evaluated.name) };
      });
    }
    const key = pendingKey(call.chatId, call.callId);
    const expiresAt = Date.now() + this.config.approvalTimeoutSec * 1000;
    const event: ApprovalRequestEvent = {
      event: 'approval_request',
      chat_id: call.chatId,
      call_id: call.callId,
      tool: evaluated.name,
      risk: evaluated.risk,
      // the exact bytes, on the owner's own screen: a redactor or a cut could hide what runs (openspec approvals
      // "Requirement: The owner sees exactly what runs"); logs, the audit and the model's texts stay redacted
      arguments: call.rawArguments,
      expires_at: localIso(expiresAt),
    };
    const scope = this.alwaysScope(evaluated);
    if (scope !== undefined) event.always_scope = scope;
    if (evaluated.command !== undefined) {
      event.sandboxed = this.sandbox.status().active;
      event.command = evaluated.command;
      const segments = commandSegments(evaluated.command);
      if (segments.ok) event.commands = segments.commands;
      else event.unanalysed = segments.reason;
      const cwd = execCwd(call.rawArguments);
      if (cwd !== undefined) event.cwd = cwd;
    }
    if (call.tool.mcp) {
      event.server = call.tool.mcp.server;
      event.destructive = call.tool.mcp.destructive;
    }
    return new Promise<ApprovalVerdict>((resolve) => {
      const pending: Pending = {
        evaluated,
        event,
        emitter,
        expiresAt,
        claimed: false,
        timer: null,
        signal,
        onAbort: () => this.settleIfOpen(pending, 'cancel'),
        resolve,
      };
      if (signal.aborted || this.stopping || this.pending.has(key)) {
        // a cancelled turn, a stopping server, or a duplicate call id in flight: nothing is asked
        pending.claimed = true;
        void this.finish(pending, 'deny', 'cancel', false);
        return;
      }
      this.pending.set(key, pending);
      pending.timer = setTimeout(() => this.settleIfOpen(pending, 'timeout'), Math.max(0, expiresAt - Date.now()));
      pending.timer.unref();
      signal.addEventListener('abort', pending.onAbort, { once: true });
      this.logger.log(
        formatEvent('approval.requested', { tool: evaluated.name, call_id: call.callId, risk: evaluated.risk }),
        logIds({ chatId: call.chatId, turnId: call.turnId }),
      );
      emitter.request(event);
    });
  }

  private settleIfOpen(pending: Pending, by: 'timeout' | 'cancel'): void {
    if (pending.claimed) return;
    pending.claimed = true;
    void this.finish(pending, 'deny', by);
  }

  /** Records the decision, announces it and lets the call go on (run or denied). */
  private async finish(pending: Pending, decision: ApprovalDecision, by: ApprovalResolver, announce = true): Promise<void> {
    const { call } = pending.evaluated;
    const key = pendingKey(call.chatId, call.callId);
    if (this.pending.get(key) === pending) this.pending.delete(key);
    if (pending.timer) clearTimeout(pending.timer);
    pending.signal.removeEventListener('abort', pending.onAbort);
    await this.record(pending.evaluated, decision, by);
    if (announce) {
      pending.emitter.resolved({ event: 'approval_resolved', chat_id: call.chatId, call_id: call.callId, decision, by });
    }
    pending.resolve(this.verdict(pending.evaluated, decision, by));
  }

  private async record(evaluated: Evaluated, decision: ApprovalDecision, by: ApprovalResolver): Promise<void> {
    const { call } = evaluated;
    const entry: ApprovalAuditEntry = {
      at: localIso(Date.now()),
      chat_id: call.chatId,
      call_id: call.callId,
      tool: evaluated.name,
      risk: evaluated.risk,
      decision,
      by,
      preview: this.preview(evaluated),
    };
    if (evaluated.server !== undefined) entry.server = evaluated.server;
    this.logger.log(
      formatEvent('approval.resolved', { tool: evaluated.name, call_id: call.callId, decision, by }),
      logIds({ chatId: call.chatId, turnId: call.turnId }),
    );
    try {
      await this.audit.append(entry);
    } catch (error) {
      // the decision stands (a denial must never turn into a run); the failure is logged
      this.logger.error(formatEvent('approval.audit.write_failed', { error: (error as NodeJS.ErrnoException).code ?? 'error' }));
    }
  }

  private verdict(evaluated: Evaluated, decision: ApprovalDecision, by: ApprovalResolver): ApprovalVerdict {
    if (decision !== 'deny') return { run: true };
    const what =
      evaluated.command !== undefined
        ? `\`${truncate(redactSecrets(evaluated.command), AUDIT_PREVIEW_MAX_CHARS)}\``
        : `the tool \`${evaluated.name}\``;
    let model: string;
    switch (by) {
      case 'policy':
        model = `Policy denies the tool \`${evaluated.name}\`; the call did not run. Do not try to get the same effect another way.`;
        break;
      case 'timeout':
        model = `No one answered the approval request for running ${what} within ${this.config.approvalTimeoutSec} s, so it was denied and did not run.`;
        break;
      case 'cancel':
        model = `The approval request for running ${what} was cancelled; it did not run.`;
        break;
      case 'user':
        model = `The user denied running ${what}. It did not run. Do not try to get the same effect another way unless the user asks.`;
        break;
    }
    return { run: false, model };
  }

  // ------------------------------------------------------------------------------------------ REST

  private async addRule(scope: StandingRuleScope): Promise<StandingRule> {
    let stored: StandingRule | null = null;
    await this.policies.update((draft) => {
      stored = draft.rules.find((rule) => sameScope(rule.scope, scope)) ?? null;
      if (stored === null) {
        stored = { id: newRuleId(), scope: { ...scope }, created_at: localIso(Date.now()) };
        draft.rules.push(stored);
      }
    });
    return stored as unknown as StandingRule;
  }

  /** GET /api/settings/tool-policies */
  policiesResponse(): ToolPoliciesResponse {
    const state = this.policies.snapshot();
    const known: ToolPolicyEntry[] = this.registry.allTools().map((tool) => {
      const risk = toolRisk(tool);
      const key = policyKey(tool);
      const entry: ToolPolicyEntry = {
        name: key,
        risk,
        policy: this.effectivePolicy(state, tool, risk),
        explicit: state.tools[key] !== undefined,
      };
      if (tool.mcp) {
        entry.server = tool.mcp.server;
        entry.read_only = tool.mcp.readOnly;
        entry.destructive = tool.mcp.destructive;
        if (tool.mcp.title !== undefined) entry.title = tool.mcp.title;
      }
      return entry;
    });
    known.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const rules = state.rules.map((rule) => {
      const inactive = ruleInactiveReason(rule.scope);
      return inactive === null ? rule : { ...rule, inactive_reason: inactive };
    });
    return { defaults: state.defaults, tools: state.tools, servers: state.servers, rules, known_tools: known };
  }

  /** PUT /api/settings/tool-policies (validated by the DTO). */
  async updatePolicies(body: UpdateToolPoliciesRequest): Promise<ToolPoliciesResponse> {
    await this.policies.update((draft) => {
      if (body.defaults) Object.assign(draft.defaults, body.defaults);
      if (body.tools) draft.tools = { ...body.tools };
      if (body.servers) draft.servers = { ...body.servers };
      if (body.keep_rule_ids) {
        const keep = new Set(body.keep_rule_ids);
        draft.rules = draft.rules.filter((rule) => keep.has(rule.id));
      }
    });
    this.logger.log(formatEvent('approval.policies.updated', {}));
    return this.policiesResponse();
  }

  /** DELETE /api/settings/tool-policies/rules/:id; false when no such rule. */
  async deleteRule(id: string): Promise<boolean> {
    if (!this.policies.current.rules.some((rule) => rule.id === id)) return false;
    let removed = false;
    await this.policies.update((draft) => {
      const before = draft.rules.length;
      draft.rules = draft.rules.filter((rule) => rule.id !== id);
      removed = draft.rules.length < before;
    });
    return removed;
  }
}
