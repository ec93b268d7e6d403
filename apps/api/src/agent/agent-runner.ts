/**
 * The agent loop (openspec agent-runner): ask the model, run the tool calls it makes, give it their results, and
 * again, until it answers without tool calls or the iteration limit is reached (then one final call without tools
 * after a system nudge). A turn crosses three interfaces, each in its own file:
 *
 * - ModelGateway (`model-gateway.ts`): one streamed completion, with retries and the usage ledger's spend limits;
 * - ToolGate (`tool-gate.ts`, used by `tool-executor.ts`): whether a call may run now (approvals, rules, Skills);
 * - the history the turn starts from comes in `messages`; what it adds goes back in the outcome (`durable`), which the
 *   chat persists through the HistoryLog.
 *
 * The loop's parts live beside it: the shapes of a run (`agent-run.ts`), its bookkeeping and outcome
 * (`turn-state.ts`), one round of tool calls (`tool-round.ts`) and the runaway guard (`runaway-guard.ts`).
 *
 * Cancellation (the AbortSignal) aborts the model request and the running tools and surfaces as AgentCancelledError
 * carrying the partial turn (complete tool rounds only).
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AGENT_RUNAWAY_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import type { ToolCallRecord } from '../memory/memory.types';
import { AgentCancelledError, ChildRunFailedError, type ActiveRun, type RunOutcome, type RunRequest } from './agent-run';
import type { AgentTool } from './agent-tool';
import { MODEL_GATEWAY, type ModelAnswer, type ModelGateway, type WireMessage } from './model-gateway';
import { childBudget } from './subagents/child-budget';
import { RunawayGuard, runawayNudge, RunawayStoppedError, type RunawayTrip } from './runaway-guard';
import { ToolExecutor } from './tool-executor';
import { runToolRound } from './tool-round';
import { ToolExecutionCancelledError, ToolRegistry, toolSchema, type ToolScope } from './tool-registry';
import { addCost, addUsage, buildOutcome, newTurnState, partialTurn, type TurnState } from './turn-state';
import { UntrustedContext } from './untrusted-context';
import { toWireMessage, withUserImages } from './wire-messages';

export { ModelCallError } from '../llm-settings/llm-provider';
export { AgentCancelledError, ChildRunFailedError } from './agent-run';
export type { ActiveRun, PartialTurn, RunnerListener, RunOutcome, RunRequest } from './agent-run';
export { emptyUsage } from './turn-state';
export type { UserImage } from './wire-messages';

export const MAX_ITERATIONS_NUDGE =
  '[System] The maximum tool-call iterations were reached. Return the best answer available from the current evidence.';
function generateCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

@Injectable()
export class AgentRunner {
  private readonly logger = new Logger(AgentRunner.name);
  /** the runs in progress by their signal: what a tool call of a run may hand to a sub-agent (activeRun) */
  private readonly active = new WeakMap<AbortSignal, ActiveRun>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tools: ToolRegistry,
    private readonly executor: ToolExecutor,
    @Inject(MODEL_GATEWAY) private readonly gateway: ModelGateway,
    @Optional() private readonly events?: AppEventBus,
  ) {}

  /** The run a tool call belongs to, by the signal its ToolContext carries (undefined once the run ended). */
  activeRun(signal: AbortSignal): ActiveRun | undefined {
    return this.active.get(signal);
  }

  /**
   * Runs one turn. Throws AgentCancelledError when the signal aborts, ModelCallError when the model fails for good,
   * SpendLimitError when a spend limit refuses a model call, RunawayStoppedError when the model kept calling tools
   * after the runaway guard told it to answer; a sub-agent's run throws these (but the cancel) wrapped in
   * ChildRunFailedError with its partial run. Tool problems never end the turn.
   */
  async run(request: RunRequest): Promise<RunOutcome> {
    const state = newTurnState(request.chatId, request.turnId);
    try {
      return await this.loop(request, state);
    } catch (err) {
      if (request.signal.aborted) {
        throw new AgentCancelledError(partialTurn(state));
      }
      // a failed child keeps what it did: its parent accounts for it
      if (request.child) throw new ChildRunFailedError(err, partialTurn(state));
      throw err;
    } finally {
      this.active.delete(request.signal);
    }
  }

  private async loop(request: RunRequest, state: TurnState): Promise<RunOutcome> {
    const child = request.child;
    const scope: ToolScope = {
      chatId: request.chatId,
      temporary: request.temporaryTools ?? new Set(),
      ...(request.toolAllowlist ? { allow: request.toolAllowlist } : {}),
      ...(child ? { only: child.tools } : {}),
    };
    // the conversation as sent to the model: the history, then this turn's tool rounds
    const wire: WireMessage[] = request.messages.map(toWireMessage);
    if (request.acceptsImages === true) withUserImages(wire, request.userImages ?? []);
    const maxIterations = Math.max(1, child?.maxIterations ?? this.config.maxIterations);
    // the untrusted content the model has in its context: the history's, then what this turn's calls read
    const untrusted = UntrustedContext.fromHistory(request.messages, (name) => this.tools.get(name));
    for (const source of request.untrustedSources ?? []) untrusted.add(source);
    const run: ActiveRun = {
      request,
      depth: child?.depth ?? 0,
      tools: [],
      untrusted,
      absorb: (usage, cost) => {
        addUsage(state.usage, usage);
        addCost(state, cost);
      },
    };
    this.active.set(request.signal, run);
    // a turn may be given stricter limits than the configuration's, never looser ones
    const guard = new RunawayGuard({
      repeatLimit: Math.min(this.config.toolRepeatLimit, request.runaway?.repeatLimit ?? Infinity),
      maxToolCalls: Math.min(this.config.maxToolCallsPerTurn, request.runaway?.maxToolCalls ?? Infinity),
    });
    const outcome = (content: string, iterationLimitReached: boolean, truncated = false): RunOutcome =>
      buildOutcome(state, untrusted, content, iterationLimitReached, truncated);
    const round = { request, state, scope, untrusted, guard, wire };

    for (let iteration = 1; iteration <= maxIterations; iteration++) {
      if (request.signal.aborted) throw new ToolExecutionCancelledError();
      const visible = this.tools.visibleTools(scope);
      run.tools = visible.map((tool) => tool.name);
      const call = await this.callModel(request, state, wire, visible, iteration);
      state.counts.modelCalls++;
      if (call.toolCalls.length === 0) return outcome(call.content, false, call.finishReason === 'length');
      const results = await runToolRound(this.executor, round, call);
      const trip = guard.recordRound(call.toolCalls, results);
      if (trip) {
        const final = await this.answerAfterRunaway(request, state, wire, trip, iteration + 1);
        state.counts.modelCalls++;
        return { ...outcome(final.content, false, final.finishReason === 'length'), runaway: trip };
      }
    }

    this.logger.log(formatEvent('agent.iteration.limit_reached', { max_iterations: maxIterations }), state.ids);
    // a sub-agent at its limit fails (its parent is told); only a turn gets a last answer without tools
    if (child) return outcome('', true);
    // the nudge goes to the model only; it is never persisted
    wire.push({ role: 'user', content: MAX_ITERATIONS_NUDGE });
    const final = await this.callModel(request, state, wire, [], maxIterations + 1);
    state.counts.modelCalls++;
    return outcome(final.content, true, final.finishReason === 'length');
  }

  /**
   * The runaway guard tripped: the model gets one instruction to answer (for the model only, never persisted) and one
   * more call without tools. Still asking for tools ends the turn with RunawayStoppedError.
   */
  private async answerAfterRunaway(
    request: RunRequest,
    state: TurnState,
    wire: WireMessage[],
    trip: RunawayTrip,
    iteration: number,
  ): Promise<ModelAnswer> {
    this.logger.warn(formatEvent('agent.runaway.tripped', { reason: trip.reason, tool: trip.tool, count: trip.count }), state.ids);
    wire.push({ role: 'user', content: runawayNudge(trip) });
    const final = await this.callModel(request, state, wire, [], iteration);
    const stopped = final.toolCalls.length > 0;
    this.events?.emit(AGENT_RUNAWAY_EVENT, { chatId: request.chatId, turnId: request.turnId, reason: trip.reason, outcome: stopped ? 'stopped' : 'answered' });
    if (stopped) {
      this.logger.warn(formatEvent('agent.runaway.stopped', { reason: trip.reason }), state.ids);
      throw new RunawayStoppedError(trip);
    }
    return final;
  }

  /** One model call through the gateway; its text is the turn's current content, its tool calls get unique ids. */
  private async callModel(
    request: RunRequest,
    state: TurnState,
    wire: readonly WireMessage[],
    tools: readonly AgentTool[],
    iteration: number,
  ): Promise<ModelAnswer> {
    state.currentContent = '';
    state.callReasoned = false;
    const answer = await this.gateway.complete({
      client: request.client,
      provider: request.provider,
      model: request.model,
      messages: wire,
      tools: tools.map(toolSchema),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      purpose: request.purpose ?? 'chat',
      chatId: request.chatId,
      // a sub-agent's calls count against its token budget (checked with the spend limits, before each attempt)
      ...(request.child ? { budget: childBudget(request.child.maxTokens, state.usage) } : {}),
      iteration,
      ids: state.ids,
      signal: request.signal,
      onDelta: (text) => {
        state.currentContent += text;
        state.streamed = true;
        request.listener.delta(text);
      },
      onReasoning: (text) => {
        // the calls of one turn: one paragraph each
        const piece = !state.callReasoned && state.reasoning !== '' ? `\n\n${text}` : text;
        state.callReasoned = true;
        state.reasoning += piece;
        request.listener.reasoning?.(piece);
      },
      onSettled: (cost) => addCost(state, cost),
    });
    addUsage(state.usage, answer.usage);
    const toolCalls: ToolCallRecord[] = answer.toolCalls.map((call) => {
      let id = call.id;
      // a sub-agent's ids are the server's own: unique in the chat, whatever its model sends
      if (!id || state.usedCallIds.has(id) || request.child) id = generateCallId();
      state.usedCallIds.add(id);
      return { ...call, id };
    });
    return { ...answer, toolCalls };
  }
}
