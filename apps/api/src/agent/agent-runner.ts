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
 * Cancellation (the AbortSignal) aborts the model request and the running tools and surfaces as AgentCancelledError
 * carrying the partial turn (complete tool rounds only).
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { LlmProvider, Money, TokenUsage, UntrustedSource } from '@cashcode/contracts';
import { logIds, type LogIds } from '../common/log-context';
import type { ChildRun, SubagentNotice } from './subagents/child-run';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AGENT_RUNAWAY_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { toolCallsContent } from '../memory/history-record';
import type { ChatMessage, ToolCallRecord } from '../memory/memory.types';
import type { AgentTool } from './agent-tool';
import type { ProviderClient } from '../llm-settings/provider-client';
import { MODEL_GATEWAY, type ModelAnswer, type ModelGateway, type WireMessage } from './model-gateway';
import { RunawayGuard, runawayNudge, RunawayStoppedError, type RunawayLimits, type RunawayTrip } from './runaway-guard';
import { ToolExecutor, type ToolListener } from './tool-executor';
import { ToolExecutionCancelledError, ToolRegistry, toolSchema, type ToolAllowlist, type ToolExecution, type ToolScope } from './tool-registry';
import type { TurnRequester } from './tool-gate';
import { UntrustedContext } from './untrusted-context';
import { toolImagesMessage, toWireMessage, withUserImages, type UserImage } from './wire-messages';

export { ModelCallError } from '../llm-settings/llm-provider';
export type { UserImage } from './wire-messages';

export const MAX_ITERATIONS_NUDGE =
  '[System] The maximum tool-call iterations were reached. Return the best answer available from the current evidence.';
/**
 * What the runner reports while it works, synchronously, as things happen: the answer's text, the model's reasoning
 * (apart from the text) and its tool calls.
 */
export interface RunnerListener extends ToolListener {
  delta(text: string): void;
  reasoning?(text: string): void;
  /** a sub-agent started by one of the turn's `delegate` calls started, did something, or ended (openspec subagents) */
  subagent?(notice: SubagentNotice): void;
}

export interface RunRequest {
  client: ProviderClient;
  provider: LlmProvider;
  model: string;
  /** system prompt(s) + previous history + the new user message */
  messages: readonly ChatMessage[];
  chatId: string;
  turnId: string;
  signal: AbortSignal;
  /** `mcp_*` tools visible for this turn only */
  temporaryTools?: ReadonlySet<string>;
  /** the only tools the turn may see and run (an automation's subset); absent: every tool */
  toolAllowlist?: ToolAllowlist;
  /**
   * whether the model takes image input (from the LLM settings of the model); tool images then follow the tool
   * messages as a user message with `image_url` parts (this turn only). Default false: placeholders only.
   */
  acceptsImages?: boolean;
  /**
   * no one can answer this turn's questions (the OpenAI-compatible endpoint, openspec openai-compat): a call whose
   * policy is `ask` is denied at once with a clear result (unless a rule or Skill pre-approves it) and MCP elicitations
   * are declined. Default false.
   */
  headless?: boolean;
  /**
   * what the turn's model calls are recorded as in the usage ledger (openspec usage): `chat` (default) for a turn of a
   * chat, `api` for a stateless OpenAI-compatible request (recorded without its throwaway chat id)
   */
  purpose?: 'chat' | 'api' | 'subagent';
  /** sampling options of the client's request, passed to every model call of the turn when set */
  temperature?: number;
  maxTokens?: number;
  /**
   * images attached to the new user message (base64); with `acceptsImages` they are sent as `image_url` parts of the
   * last user message (this turn only, never persisted), else they are left out
   */
  userImages?: readonly UserImage[];
  /** stricter runaway-guard limits for this turn (an automation's, a child run's); default: the configuration's */
  runaway?: Partial<RunawayLimits>;
  listener: RunnerListener;
  /** a sub-agent's run (openspec subagents, agent/subagents/): its place, tools and limit */
  child?: ChildRun;
  /** untrusted content the run starts with besides its history's (a child gets its parent's) */
  untrustedSources?: readonly UntrustedSource[];
  /** who the turn answers (absent: the owner); a child gets its parent's */
  requester?: TurnRequester;
}

/** A run in progress as a tool call of it sees it (a `delegate` call starts its child from it). */
export interface ActiveRun {
  readonly request: RunRequest;
  /** 0 for a chat turn, the child's depth for a sub-agent */
  readonly depth: number;
  /** the tools its model was offered for the current round of calls */
  tools: readonly string[];
  /** the untrusted content in its context */
  readonly untrusted: UntrustedContext;
  /** adds a sub-agent's model calls to the run's usage and cost (null cost: a call without a price) */
  absorb(usage: TokenUsage, cost: Money | null): void;
}

export interface RunOutcome {
  /** the final answer */
  content: string;
  /** the model's reasoning over the whole turn (every call's, in order); absent when it sent none */
  reasoning?: string;
  /** the last model call stopped at its output limit: the answer is cut short (a `continue` carries on) */
  truncated?: boolean;
  /** assistant tool-call messages and tool results (persisted projections) of this turn, in order */
  durable: ChatMessage[];
  usage: TokenUsage;
  /** the summed cost of the turn's model calls when every one of them had a price (openspec usage) */
  cost?: Money;
  /** model calls made */
  modelCalls: number;
  iterationLimitReached: boolean;
  /** the runaway guard stopped the tool calls and the model answered after its instruction (runaway-guard.ts) */
  runaway?: RunawayTrip;
  toolCalls: number;
  failedToolCalls: number;
  /** the untrusted content the run had in its context at its end (a sub-agent's answer carries it to its parent) */
  untrustedSources?: UntrustedSource[];
}

/** The part of a cancelled turn that may be persisted. */
export interface PartialTurn {
  /** text streamed by the model call that was running (after the last complete tool round) */
  content: string;
  /** whether any delta reached the client during the turn */
  streamed: boolean;
  /** the reasoning streamed during the turn (absent: none) */
  reasoning?: string;
  /** complete tool rounds only (an assistant tool-call message always with all of its results) */
  durable: ChatMessage[];
  usage: TokenUsage;
  cost?: Money;
}

export class AgentCancelledError extends Error {
  constructor(readonly partial: PartialTurn) {
    super('The turn was cancelled.');
    this.name = 'AgentCancelledError';
  }
}

export function emptyUsage(): TokenUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

function addUsage(total: TokenUsage, usage: TokenUsage | null): void {
  if (!usage) return;
  total.prompt_tokens += usage.prompt_tokens;
  total.completion_tokens += usage.completion_tokens;
  total.total_tokens += usage.total_tokens;
  // only when the provider reports it: absent means unknown
  if (usage.cached_tokens !== undefined) total.cached_tokens = (total.cached_tokens ?? 0) + usage.cached_tokens;
  if (usage.cache_write_tokens !== undefined) total.cache_write_tokens = (total.cache_write_tokens ?? 0) + usage.cache_write_tokens;
}

function generateCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** Mutable state of one turn, shared by the loop and the cancellation path. */
interface TurnState {
  usage: TokenUsage;
  durable: ChatMessage[];
  /** text of the model call in progress */
  currentContent: string;
  /** reasoning of the turn so far (the calls joined by a blank line) */
  reasoning: string;
  /** whether the call in progress has reasoning yet (a new call's reasoning starts a new paragraph) */
  callReasoned: boolean;
  streamed: boolean;
  usedCallIds: Set<string>;
  /** the turn's chat and turn ids for its log lines */
  ids: LogIds;
  /** summed cost of the recorded calls; null once a call had no price */
  cost: Money | null | undefined;
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
   * after the runaway guard told it to answer. Tool problems never end the turn.
   */
  async run(request: RunRequest): Promise<RunOutcome> {
    const state: TurnState = {
      usage: emptyUsage(),
      durable: [],
      currentContent: '',
      reasoning: '',
      callReasoned: false,
      streamed: false,
      usedCallIds: new Set(),
      ids: logIds({ chatId: request.chatId, turnId: request.turnId }),
      cost: undefined,
    };
    try {
      return await this.loop(request, state);
    } catch (err) {
      if (request.signal.aborted) {
        throw new AgentCancelledError({
          content: state.currentContent,
          streamed: state.streamed,
          ...(state.reasoning !== '' ? { reasoning: state.reasoning } : {}),
          durable: state.durable,
          usage: state.usage,
          ...(state.cost ? { cost: state.cost } : {}),
        });
      }
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
    const counts = { modelCalls: 0, toolCalls: 0, failedToolCalls: 0 };
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
    const outcome = (content: string, iterationLimitReached: boolean, truncated = false): RunOutcome => ({
      content,
      ...(state.reasoning !== '' ? { reasoning: state.reasoning } : {}),
      ...(truncated ? { truncated: true } : {}),
      durable: state.durable,
      usage: state.usage,
      ...(state.cost ? { cost: state.cost } : {}),
      ...counts,
      iterationLimitReached,
      untrustedSources: untrusted.sources,
    });

    for (let iteration = 1; iteration <= maxIterations; iteration++) {
      if (request.signal.aborted) throw new ToolExecutionCancelledError();
      const visible = this.tools.visibleTools(scope);
      run.tools = visible.map((tool) => tool.name);
      const call = await this.callModel(request, state, wire, visible, iteration);
      counts.modelCalls++;
      if (call.toolCalls.length === 0) return outcome(call.content, false, call.finishReason === 'length');
      const assistant: ChatMessage = { role: 'assistant', content: call.content, tool_calls: call.toolCalls };
      // the calls past the turn's ceiling do not run (runaway-guard.ts)
      const admitted = guard.admit(call.toolCalls.length);
      const ran = await this.executor.executeCalls(
        {
          chatId: request.chatId,
          turnId: request.turnId,
          signal: request.signal,
          headless: request.headless === true,
          ...(request.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
          scope,
          ids: state.ids,
          listener: request.listener,
          untrusted,
          ...(child ? { subagent: child.ref } : {}),
        },
        call.toolCalls.slice(0, admitted),
      );
      const results = [...ran, ...guard.notRun(call.toolCalls.slice(admitted), request.listener)];
      // a tool round becomes part of the turn only once every result is in (cancel keeps complete rounds only). The
      // model gets the tool-call message as the history will give it back on the next turn (the `tool_calls` record's
      // `[TOOL_CALLS: …]` content, sent as ""), so the next turn's request starts with this one's bytes (a cacheable prefix)
      // `replay` (thinking blocks, a reasoning field) goes back within this turn only, as the provider requires
      const sent: WireMessage = toWireMessage({ ...assistant, content: toolCallsContent(call.toolCalls) });
      wire.push(call.replay !== undefined ? { ...sent, replay: call.replay } : sent);
      state.durable.push(assistant);
      for (const [index, toolCall] of call.toolCalls.entries()) {
        const result = results[index] as ToolExecution;
        counts.toolCalls++;
        if (!result.ok) counts.failedToolCalls++;
        wire.push({ role: 'tool', content: result.model, tool_call_id: toolCall.id });
        state.durable.push({
          role: 'tool',
          content: result.persisted,
          tool_call_id: toolCall.id,
          name: toolCall.function.name,
          ok: result.ok,
          duration_ms: result.durationMs,
        });
      }
      // OpenAI tool messages hold text only: the images of the round follow as one user message, never persisted
      const images = request.acceptsImages === true ? toolImagesMessage(call.toolCalls, results) : null;
      if (images) wire.push(images);
      state.currentContent = '';
      const trip = guard.recordRound(call.toolCalls, results);
      if (trip) {
        const final = await this.answerAfterRunaway(request, state, wire, trip, iteration + 1);
        counts.modelCalls++;
        return { ...outcome(final.content, false, final.finishReason === 'length'), runaway: trip };
      }
    }

    this.logger.log(formatEvent('agent.iteration.limit_reached', { max_iterations: maxIterations }), state.ids);
    // a sub-agent at its limit fails (its parent is told); only a turn gets a last answer without tools
    if (child) return outcome('', true);
    // the nudge goes to the model only; it is never persisted
    wire.push({ role: 'user', content: MAX_ITERATIONS_NUDGE });
    const final = await this.callModel(request, state, wire, [], maxIterations + 1);
    counts.modelCalls++;
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

/** Adds a settled call's cost to the turn's; a call without a price (or in another currency) leaves the turn without. */
function addCost(state: TurnState, cost: Money | null): void {
  if (state.cost === null) return;
  if (cost === null || (state.cost && state.cost.currency !== cost.currency)) {
    state.cost = null;
    return;
  }
  state.cost = { amount: Math.round(((state.cost?.amount ?? 0) + cost.amount) * 1e9) / 1e9, currency: cost.currency };
}
