/**
 * The agent's ToolGate (openspec approvals "Requirement: The approval protocol"): before a tool call runs its effective
 * policy is decided (call-evaluation.ts); an `ask` call waits for the user's `approval` frame.
 *
 * `deny` never runs and is never overridden. `ask` becomes allow (by `policy`) when a standing rule covers the call
 * or a Skill loaded in the turn pre-approves it (`allowed-tools`); otherwise an `approval_request` goes to the chat and
 * the call waits for `allow_once`, `allow_always` (also stores a standing rule) or `deny`, until it expires
 * (CASHCODE_APPROVAL_TIMEOUT_SEC → deny by `timeout`) or the turn is cancelled or the server stops (deny by `cancel`).
 *
 * Every decision (user, policy, timeout, cancel) is appended to the audit log before it takes effect and announced
 * with `approval_resolved`; a plain `allow` is no decision and produces no event.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { ApprovalAuditEntry, ApprovalDecision, ApprovalRequestEvent, ApprovalResolver, StandingRule } from '@cashcode/contracts';
import type { ApprovalCall, ApprovalEmitter, ApprovalGate, ApprovalVerdict, ToolGate } from '../agent/tool-gate';
import { ExecSandboxService } from '../agent/sandbox/exec-sandbox.service';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApprovalAuditLog } from './approval-audit';
import { TrustedSourceStore } from './trusted-source-store';
import { approvalRequest, approvalTime, approvalVerdict, auditPreview, headlessDenial } from './approval-texts';
import { coveredByRules, evaluateCall, type Evaluated, type PreApprovalSource } from './call-evaluation';
import { ToolPoliciesService } from './tool-policies.service';
import { ToolPolicyStore } from './tool-policy-store';

export type { PreApprovalSource } from './call-evaluation';
export { AUDIT_PREVIEW_MAX_CHARS, headlessDenial } from './approval-texts';

export type DecideResult = { ok: true } | { ok: false; code: 'unknown_approval' | 'approval_failed'; detail: string };

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

function pendingKey(chatId: string, callId: string): string {
  return `${chatId}\u0000${callId}`;
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
    private readonly rules: ToolPoliciesService,
    private readonly audit: ApprovalAuditLog,
    private readonly sandbox: ExecSandboxService,
    private readonly trusted: TrustedSourceStore,
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
    // content from a source the owner trusts no longer makes an owner-gated write ask (trusted-sources.ts)
    const counted = { ...call, untrustedSources: this.trusted.stillUntrusted(call.untrustedSources) };
    const evaluated = evaluateCall(counted, this.policies.current, this.preApprovalSource);
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
          rule = await this.rules.addRule(scope);
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
        if (!other.claimed && other.evaluated.policy === 'ask' && !other.evaluated.nonOwner && coveredByRules(other.evaluated, [rule])) {
          other.claimed = true;
          await this.finish(other, 'allow_once', 'policy');
        }
      }
    }
    return { ok: true };
  }

  private open(evaluated: Evaluated, emitter: ApprovalEmitter, signal: AbortSignal): Promise<ApprovalVerdict> {
    const { call } = evaluated;
    if (evaluated.policy === 'deny' || evaluated.preApproved) {
      const decision: ApprovalDecision = evaluated.policy === 'deny' ? 'deny' : 'allow_once';
      return this.record(evaluated, decision, 'policy').then(() => {
        emitter.resolved({ event: 'approval_resolved', chat_id: call.chatId, call_id: call.callId, decision, by: 'policy' });
        return approvalVerdict(evaluated, decision, 'policy', this.config.approvalTimeoutSec);
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
    const event = approvalRequest(evaluated, expiresAt, this.sandbox.status().active);
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
    pending.resolve(approvalVerdict(pending.evaluated, decision, by, this.config.approvalTimeoutSec));
  }

  private async record(evaluated: Evaluated, decision: ApprovalDecision, by: ApprovalResolver): Promise<void> {
    const { call } = evaluated;
    const entry: ApprovalAuditEntry = {
      at: approvalTime(Date.now()),
      chat_id: call.chatId,
      call_id: call.callId,
      tool: evaluated.name,
      risk: evaluated.risk,
      decision,
      by,
      preview: auditPreview(evaluated),
    };
    if (evaluated.server !== undefined) entry.server = evaluated.server;
    if (call.subagent) entry.subagent = { ...call.subagent };
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
}
