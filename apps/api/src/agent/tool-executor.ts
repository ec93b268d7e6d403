/**
 * Runs the tool calls of one model answer (openspec agent-runner "Requirement: Tool execution"): every call passes the
 * ToolGate first; consecutive read-only calls run concurrently (bounded), any other call runs alone, in order; results
 * come back in call order. Calls that need a decision (policy `ask` or `deny`, or let through by a rule or an approved
 * Skill) are announced and gated at once when the message's calls start, so the user sees every question of the
 * message together and read-only calls keep running while one waits for its answer.
 *
 * A result over the tool-output budget is kept whole as an artifact and the model and the history get a preview.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  ApprovalRequestEvent,
  ApprovalResolvedEvent,
  ElicitationRequestEvent,
  ElicitationResolvedEvent,
  SubagentRef,
} from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ArtifactStore } from '../memory/artifact.store';
import type { ToolCallRecord } from '../memory/memory.types';
import { argumentPreview } from './argument-preview';
import { ElicitationsService } from './elicitations';
import { TOOL_GATE, type ApprovalEmitter, type ApprovalVerdict, type ToolGate, type TurnRequester } from './tool-gate';
import { budgetToolResult, type ArtifactSink } from './tool-output-budget';
import { parseToolArguments, ToolExecutionCancelledError, ToolRegistry, type ToolExecution, type ToolScope } from './tool-registry';
import { untrustedSourceOf, UntrustedContext } from './untrusted-context';

/** read-only calls of one assistant message running at the same time */
export const READ_ONLY_CONCURRENCY = 4;
/** characters of the public projection sent in a WS tool_result */
export const TOOL_RESULT_PREVIEW_CHARS = 200;

export interface ToolCallNotice {
  callId: string;
  name: string;
  /** redacted, truncated argument JSON */
  arguments: string;
}

export interface ToolProgressNotice {
  callId: string;
  name: string;
  progress: number;
  total?: number;
  message?: string;
}

export interface ToolResultNotice {
  callId: string;
  name: string;
  /** first 200 code points of the public projection */
  result: string;
  ok: boolean;
  durationMs: number;
}

/** What a turn reports about its tool calls, synchronously, as things happen. */
export interface ToolListener {
  toolCall(notice: ToolCallNotice): void;
  toolResult(notice: ToolResultNotice): void;
  /** a running call reported progress (`tool_progress`) */
  toolProgress?(notice: ToolProgressNotice): void;
  /** a call waits for the user (`approval_request`) */
  approvalRequest?(event: ApprovalRequestEvent): void;
  /** a call's approval was decided (`approval_resolved`) */
  approvalResolved?(event: ApprovalResolvedEvent): void;
  /** a running call's server asks the user (`elicitation_request`) or the request was answered (`elicitation_resolved`) */
  elicitation?(event: ElicitationRequestEvent | ElicitationResolvedEvent): void;
}

/** The turn a round of calls belongs to. */
export interface ToolRound {
  chatId: string;
  turnId: string;
  signal: AbortSignal;
  /** no one can answer: `ask` calls are denied at once and elicitations declined */
  headless: boolean;
  scope: ToolScope;
  ids: LogIds;
  listener: ToolListener;
  /** the untrusted content of the turn's context; the round adds the sources of its own calls (absent: a fresh one) */
  untrusted?: UntrustedContext;
  /** the round is a sub-agent's (openspec subagents): its approval requests name it */
  subagent?: SubagentRef;
  /** who the turn answers (absent: the owner); a non-owner's calls ask the owner (ToolGate) */
  requester?: TurnRequester;
}

/** The first `max` code points of a text, without splitting the whole (possibly large) text into an array. */
function firstCodePoints(text: string, max: number): string {
  let count = 0;
  let end = 0;
  for (const char of text) {
    if (count === max) return text.slice(0, end);
    count++;
    end += char.length;
  }
  return text;
}

@Injectable()
export class ToolExecutor {
  private readonly logger = new Logger('AgentRunner');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tools: ToolRegistry,
    @Inject(TOOL_GATE) private readonly gate: ToolGate,
    private readonly elicitations: ElicitationsService,
    /** where over-budget tool results are kept */
    @Inject(ArtifactStore) private readonly artifacts: ArtifactSink,
  ) {}

  /** Runs the calls of one answer; the results are in call order. Throws ToolExecutionCancelledError on cancel. */
  async executeCalls(given: ToolRound, calls: readonly ToolCallRecord[]): Promise<ToolExecution[]> {
    const round: ToolRound = given.untrusted ? given : { ...given, untrusted: new UntrustedContext() };
    const verdicts = this.openGates(round, calls);
    const results: ToolExecution[] = new Array<ToolExecution>(calls.length);
    let index = 0;
    while (index < calls.length) {
      const first = calls[index] as ToolCallRecord;
      if (!this.tools.runsConcurrently(first.function.name)) {
        results[index] = await this.executeOne(round, first, verdicts[index] ?? null);
        index++;
        continue;
      }
      let end = index;
      while (end < calls.length && this.tools.runsConcurrently((calls[end] as ToolCallRecord).function.name)) end++;
      let next = index;
      const stop = end;
      const worker = async (): Promise<void> => {
        while (next < stop) {
          const current = next++;
          results[current] = await this.executeOne(round, calls[current] as ToolCallRecord, verdicts[current] ?? null);
        }
      };
      await Promise.all(Array.from({ length: Math.min(READ_ONLY_CONCURRENCY, stop - index) }, () => worker()));
      index = end;
    }
    return results;
  }

  /** The gates of a message's calls: null for a call that simply runs (or that would not run at all). */
  private openGates(round: ToolRound, calls: readonly ToolCallRecord[]): Array<Promise<ApprovalVerdict> | null> {
    const emitter: ApprovalEmitter = {
      request: (event) => round.listener.approvalRequest?.(event),
      resolved: (event) => round.listener.approvalResolved?.(event),
    };
    return calls.map((call) => {
      const tool = this.tools.runnable(call.function.name, round.scope, call.function.arguments);
      // unknown, not activated or with invalid arguments: the registry answers without running anything
      if (!tool || !parseToolArguments(call.function.arguments).ok) return null;
      const gate = this.gate.gate({
        chatId: round.chatId,
        turnId: round.turnId,
        callId: call.id,
        tool,
        rawArguments: call.function.arguments,
        ...(round.headless ? { headless: true } : {}),
        // the sources the model had seen when it wrote this message (not those of its own calls)
        untrustedSources: round.untrusted?.sources ?? [],
        ...(round.subagent ? { subagent: round.subagent } : {}),
        ...(round.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
      });
      if (gate.plainAllow) return null;
      this.announce(round, call);
      const verdict = gate.open(emitter, round.signal);
      // settled by the decision, the timeout or the cancel even when the turn ends before the call's turn comes
      verdict.catch(() => undefined);
      return verdict;
    });
  }

  private announce(round: ToolRound, call: ToolCallRecord): void {
    round.listener.toolCall({ callId: call.id, name: call.function.name, arguments: argumentPreview(call.function.arguments) });
  }

  private async executeOne(round: ToolRound, call: ToolCallRecord, gate: Promise<ApprovalVerdict> | null): Promise<ToolExecution> {
    const name = call.function.name;
    const logFields = { tool: name, call_id: call.id };
    if (gate === null) this.announce(round, call);
    else {
      const verdict = await gate;
      if (round.signal.aborted) {
        this.logger.log(formatEvent('tool.execution.cancelled', logFields), round.ids);
        throw new ToolExecutionCancelledError();
      }
      if (!verdict.run) {
        this.logger.log(formatEvent('tool.execution.denied', logFields), round.ids);
        const denied: ToolExecution = { name, model: verdict.model, public: verdict.model, persisted: verdict.model, ok: false, durationMs: 0 };
        round.listener.toolResult({ callId: call.id, name, result: firstCodePoints(denied.public, TOOL_RESULT_PREVIEW_CHARS), ok: false, durationMs: 0 });
        return denied;
      }
    }
    this.logger.debug(formatEvent('tool.execution.started', logFields), round.ids);
    let result: ToolExecution;
    try {
      result = await this.tools.execute(
        name,
        call.function.arguments,
        {
          chatId: round.chatId,
          turnId: round.turnId,
          callId: call.id,
          signal: round.signal,
          untrustedSources: round.untrusted?.sources ?? [],
          requestedBy: round.headless ? 'api' : 'owner',
          ...(gate !== null ? { approved: true } : {}),
          progress: (update) => round.listener.toolProgress?.({ callId: call.id, name, ...update }),
          elicit: (ask) =>
            round.listener.elicitation && !round.headless
              ? this.elicitations.request({
                  ...ask,
                  chatId: round.chatId,
                  callId: call.id,
                  toolName: name,
                  signal: round.signal,
                  emit: (event) => round.listener.elicitation?.(event),
                })
              : Promise.resolve({ action: 'decline' }),
        },
        round.scope,
      );
    } catch (err) {
      if (err instanceof ToolExecutionCancelledError) this.logger.log(formatEvent('tool.execution.cancelled', logFields), round.ids);
      throw err;
    }
    this.logger.log(
      formatEvent(result.ok ? 'tool.execution.completed' : 'tool.execution.failed', {
        ...logFields,
        duration_ms: result.durationMs,
        result_length: result.model.length,
      }),
      round.ids,
    );
    round.listener.toolResult({
      callId: call.id,
      name,
      result: firstCodePoints(result.public, TOOL_RESULT_PREVIEW_CHARS),
      ok: result.ok,
      durationMs: result.durationMs,
    });
    return this.frameUntrusted(round, call, await this.applyOutputBudget(round, call, result));
  }

  /**
   * A result from an untrusted source joins the turn's untrusted context and reaches the model inside the turn's
   * random frame with its source label (untrusted-context.ts); the history and the client keep the plain text. A
   * failed call read nothing from its source (the refusal is the server's own text), except an MCP tool's error.
   */
  private frameUntrusted(round: ToolRound, call: ToolCallRecord, result: ToolExecution): ToolExecution {
    // a result that carries untrusted content of its own (a sub-agent's answer): every source joins the context
    const [first, ...rest] = result.untrusted ?? [];
    if (first && round.untrusted) {
      for (const carried of [first, ...rest]) round.untrusted.add(carried);
      return { ...result, model: round.untrusted.wrap(result.model, first) };
    }
    const source = untrustedSourceOf(call.function.name, call.function.arguments, this.tools.get(call.function.name)?.mcp);
    // a failed call read nothing, except an MCP tool whose error text is the server's own
    if (source === null || !round.untrusted || (!result.ok && source.kind !== 'mcp_tool')) return result;
    round.untrusted.add(source);
    return { ...result, model: round.untrusted.wrap(result.model, source) };
  }

  /**
   * A result whose whole text would go to the model and to the history (persisted = model) and is over the budget is
   * kept as an artifact; both get the preview instead (tool-output-budget.ts). Results with their own persisted form
   * (skill_load's receipt) are left alone: their full text is meant for this turn only.
   */
  private async applyOutputBudget(round: ToolRound, call: ToolCallRecord, result: ToolExecution): Promise<ToolExecution> {
    if (result.persisted !== result.model) return result;
    try {
      const preview = await budgetToolResult(this.artifacts, this.config.toolOutputBudgetChars, round.chatId, call.id, result.name, result.model);
      if (preview === null) return result;
      this.logger.log(formatEvent('tool.result.artifact', { tool: result.name, call_id: call.id, chars: result.model.length }), round.ids);
      return { ...result, model: preview, persisted: preview };
    } catch (err) {
      this.logger.warn(formatEvent('tool.result.artifact_failed', { tool: result.name, error: (err as Error).name }), round.ids);
      return result;
    }
  }
}
