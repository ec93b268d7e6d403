/**
 * The ReAct runner (openspec/specs/agent-runner/spec.md: real streaming, cancellation, additive WS fields): streams the
 * model (`stream: true`, usage included), forwards content deltas as they arrive, accumulates tool calls across chunks,
 * executes them (consecutive read-only calls concurrently, bounded; the rest in order; results in call order), and
 * loops until the model answers without tool calls or the iteration limit is reached (then one final call without tools
 * after a system nudge).
 *
 * Provider errors are classified once; retryable kinds are retried with exponential backoff + jitter (honouring
 * Retry-After) while nothing of that call has reached the client. Cancellation (the AbortSignal) aborts the HTTP
 * request and the running tools and surfaces as AgentCancelledError carrying the partial turn.
 *
 * The request body is the SDK's own: the params (history, this turn's tool rounds, tool schemas) are serialised by the
 * `openai` SDK on every model call. Assembling it from cached per-message JSON bytes instead (WireConversation) was
 * removed because it did not pay: building the body of a 40-message (25 KB) request with 12 tools took 0.25–0.35 ms
 * less per model call that way (200 messages, 100 KB: 0.66–0.89 ms; loop of 3000 builds, median of 5, loaded 2-core
 * VM), under the 0.5 ms per turn a trick must save; `npm run bench -- server` A/B runs (3 interleaved rounds) showed no
 * loss without it: plain-turn overhead 19.2 → 14.8 ms, server CPU under load 9.60 → 8.56 ms per turn (noise ±5 ms).
 */
import { randomBytes } from 'node:crypto';
import { HttpStatus, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type {
  ApprovalRequestEvent,
  ApprovalResolvedEvent,
  ElicitationRequestEvent,
  ElicitationResolvedEvent,
  LlmProvider,
  Money,
  TokenUsage,
} from '@cashcode/contracts';
import { ApprovalsService, type ApprovalEmitter, type ApprovalVerdict } from '../approvals/approvals.service';
import { logIds, type LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DomainError } from '../common/domain-error';
import type { ClassifiedProviderError, ProviderErrorKind } from '../llm-settings/llm-provider';
import { completionChunkBatches } from '../llm-settings/completion-stream';
import { classifyProviderError } from '../llm-settings/provider-errors';
import { MemoryStore } from '../memory/memory-store';
import { toolCallsContent } from '../memory/history-record';
import { UsageService, type UsageReservation } from '../usage/usage.service';
import { reportedCachedTokens } from '../usage/reported-usage';
import type { ChatMessage, ToolCallRecord } from '../memory/memory.types';
import type { AgentTool } from './agent-tool';
import { argumentPreview } from './argument-preview';
import { ElicitationsService } from './elicitations';
import { budgetToolResult, type ArtifactSink } from './tool-output-budget';
import {
  parseToolArguments,
  ToolExecutionCancelledError,
  ToolRegistry,
  toolSchema,
  type ToolExecution,
  type ToolScope,
} from './tool-registry';

export const MAX_ITERATIONS_NUDGE =
  '[System] The maximum tool-call iterations were reached. Return the best answer available from the current evidence.';
/** read-only calls of one assistant message running at the same time */
export const READ_ONLY_CONCURRENCY = 4;
/** characters of the public projection sent in a WS tool_result */
export const TOOL_RESULT_PREVIEW_CHARS = 200;

const RETRY_BASE_DELAY_MS = 500;
const RETRY_MAX_DELAY_MS = 8_000;
/** a provider asking us to wait longer than this gets a clear error instead of a silent wait */
const RETRY_AFTER_LIMIT_MS = 30_000;
const RETRY_JITTER_MS = 250;

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

/** What the runner reports while it works, synchronously, as things happen. */
export interface RunnerListener {
  delta(text: string): void;
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

export interface RunRequest {
  client: OpenAI;
  provider: LlmProvider;
  model: string;
  /** system prompt(s) + previous history + the new user message */
  messages: readonly ChatMessage[];
  chatId: string;
  turnId: string;
  signal: AbortSignal;
  /** `mcp_*` tools visible for this turn only */
  temporaryTools?: ReadonlySet<string>;
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
  purpose?: 'chat' | 'api';
  /** sampling options of the client's request, passed to every model call of the turn when set */
  temperature?: number;
  maxTokens?: number;
  /**
   * images attached to the new user message (base64); with `acceptsImages` they are sent as `image_url` parts of the
   * last user message (this turn only, never persisted), else they are left out
   */
  userImages?: readonly UserImage[];
  listener: RunnerListener;
}

/** An image attached to the user message. */
export interface UserImage {
  mimeType: string;
  /** base64 */
  data: string;
}

export interface RunOutcome {
  /** the final answer */
  content: string;
  /** assistant tool-call messages and tool results (persisted projections) of this turn, in order */
  durable: ChatMessage[];
  usage: TokenUsage;
  /** the summed cost of the turn's model calls when every one of them had a price (openspec usage) */
  cost?: Money;
  /** model calls made */
  modelCalls: number;
  iterationLimitReached: boolean;
  toolCalls: number;
  failedToolCalls: number;
}

/** The part of a cancelled turn that may be persisted. */
export interface PartialTurn {
  /** text streamed by the model call that was running (after the last complete tool round) */
  content: string;
  /** whether any delta reached the client during the turn */
  streamed: boolean;
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

/**
 * A model call failed for good (not retryable, retries exhausted, or the stream broke after deltas were sent). A coded
 * domain error whose code is the provider error kind (`auth`, `rate_limit`, `timeout`, …) and whose message is the
 * sanitised provider message: REST answers 502 (504 for a timeout), the WS gateway an `error` event with that code.
 */
export class ModelCallError extends DomainError<ProviderErrorKind> {
  constructor(readonly classified: ClassifiedProviderError) {
    super(classified.kind, classified.message, {
      status: classified.kind === 'timeout' ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY,
    });
  }
}

export function emptyUsage(): TokenUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

function addUsage(total: TokenUsage, usage: ChatCompletionChunk['usage'] | null | undefined): void {
  if (!usage) return;
  total.prompt_tokens += usage.prompt_tokens ?? 0;
  total.completion_tokens += usage.completion_tokens ?? 0;
  total.total_tokens += usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0);
  // only when the provider reports it (reported-usage.ts): absent means unknown
  const cached = reportedCachedTokens(usage);
  if (cached !== undefined) total.cached_tokens = (total.cached_tokens ?? 0) + cached;
}

function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
    case 'assistant':
      return message.tool_calls && message.tool_calls.length > 0
        ? { role: 'assistant', content: message.content, tool_calls: message.tool_calls }
        : { role: 'assistant', content: message.content };
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
  }
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

/**
 * The last user message of `wire` as OpenAI content parts: its text, then one `image_url` part (a data URL) per image.
 * Changes nothing without images or without a user message.
 */
export function withUserImages(wire: ChatCompletionMessageParam[], images: readonly UserImage[]): void {
  if (images.length === 0) return;
  for (let index = wire.length - 1; index >= 0; index--) {
    const message = wire[index] as ChatCompletionMessageParam;
    if (message.role !== 'user') continue;
    const text = typeof message.content === 'string' ? message.content : '';
    const parts: ChatCompletionContentPart[] = [{ type: 'text', text }];
    for (const image of images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } });
    }
    wire[index] = { role: 'user', content: parts };
    return;
  }
}

/** The user message that hands a tool round's images to a model that accepts images; null without images. */
export function toolImagesMessage(
  calls: readonly ToolCallRecord[],
  results: readonly ToolExecution[],
): ChatCompletionMessageParam | null {
  const parts: ChatCompletionContentPart[] = [];
  for (const [index, call] of calls.entries()) {
    const images = results[index]?.images ?? [];
    if (images.length === 0) continue;
    parts.push({ type: 'text', text: `[images returned by the tool call ${call.id} (${call.function.name})]` });
    for (const image of images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } });
    }
  }
  return parts.length > 0 ? { role: 'user', content: parts } : null;
}

/** Characters of a call's answer (text and tool calls) for an estimate when the provider reports no usage. */
function answerChars(call: StreamedCall): number {
  let chars = call.content.length;
  for (const toolCall of call.toolCalls) chars += toolCall.function.name.length + toolCall.function.arguments.length;
  return chars;
}

function generateCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** Resolves after `ms`, or rejects at once when the signal aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new ToolExecutionCancelledError());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ToolExecutionCancelledError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

interface StreamedCall {
  content: string;
  toolCalls: ToolCallRecord[];
  /** what the provider reported for this call (null: nothing) */
  usage: ChatCompletionChunk['usage'] | null;
}

/** Characters an image part counts as in a spend-limit estimate (about 750 tokens; providers price images apart). */
export const IMAGE_PART_ESTIMATE_CHARS = 3000;

/** Characters of a request for the usage estimate: message texts, tool calls and the tool schemas. */
export function requestChars(wire: readonly ChatCompletionMessageParam[], toolsJsonChars: number): number {
  let chars = toolsJsonChars;
  for (const message of wire) {
    const content = message.content;
    if (typeof content === 'string') chars += content.length;
    else if (Array.isArray(content)) {
      for (const part of content as Array<{ type: string; text?: string }>) {
        chars += part.type === 'text' ? (part.text?.length ?? 0) : IMAGE_PART_ESTIMATE_CHARS;
      }
    }
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        if (call.type === 'function') chars += call.function.name.length + call.function.arguments.length;
      }
    }
  }
  return chars;
}

/** Mutable state of one turn, shared by the loop and the cancellation path. */
interface TurnState {
  usage: TokenUsage;
  durable: ChatMessage[];
  /** text of the model call in progress */
  currentContent: string;
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

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tools: ToolRegistry,
    /** tool policies and approvals; without it (unit tests) every call runs */
    @Optional() private readonly approvals?: ApprovalsService,
    /** MCP elicitations; without it (unit tests) every elicitation is declined */
    @Optional() private readonly elicitations?: ElicitationsService,
    /** where over-budget tool results are kept (the memory store); without it (unit tests) results go whole */
    @Optional() @Inject(MemoryStore) private readonly artifacts?: ArtifactSink,
    /** the usage ledger and spend limits; without it (unit tests) nothing is checked or recorded */
    @Optional() private readonly usage?: UsageService,
  ) {}

  /**
   * Runs one turn. Throws AgentCancelledError when the signal aborts, ModelCallError when the model fails for good.
   * Tool problems never end the turn.
   */
  async run(request: RunRequest): Promise<RunOutcome> {
    const state: TurnState = {
      usage: emptyUsage(),
      durable: [],
      currentContent: '',
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
          durable: state.durable,
          usage: state.usage,
          ...(state.cost ? { cost: state.cost } : {}),
        });
      }
      throw err;
    }
  }

  private async loop(request: RunRequest, state: TurnState): Promise<RunOutcome> {
    const scope: ToolScope = { chatId: request.chatId, temporary: request.temporaryTools ?? new Set() };
    // the conversation as sent to the model: the history, then this turn's tool rounds
    const wire: ChatCompletionMessageParam[] = request.messages.map(toWireMessage);
    if (request.acceptsImages === true) withUserImages(wire, request.userImages ?? []);
    const maxIterations = Math.max(1, this.config.maxIterations);
    let modelCalls = 0;
    let toolCalls = 0;
    let failedToolCalls = 0;

    for (let iteration = 1; iteration <= maxIterations; iteration++) {
      if (request.signal.aborted) throw new ToolExecutionCancelledError();
      const visible = this.tools.visibleTools(scope);
      const call = await this.callModel(request, state, wire, visible, iteration);
      modelCalls++;
      if (call.toolCalls.length === 0) {
        return {
          content: call.content,
          durable: state.durable,
          usage: state.usage,
          ...(state.cost ? { cost: state.cost } : {}),
          modelCalls,
          iterationLimitReached: false,
          toolCalls,
          failedToolCalls,
        };
      }
      const assistant: ChatMessage = { role: 'assistant', content: call.content, tool_calls: call.toolCalls };
      const results = await this.executeCalls(request, scope, call.toolCalls, state.ids);
      // a tool round becomes part of the turn only once every result is in (cancel keeps complete rounds only). The
      // model gets the tool-call message as the history will give it back on the next turn (`[TOOL_CALLS: …]`, the
      // `tool_calls` record's content), so the next turn's request starts with this one's bytes (a cacheable prefix)
      wire.push(toWireMessage({ ...assistant, content: toolCallsContent(call.toolCalls) }));
      state.durable.push(assistant);
      for (const [index, toolCall] of call.toolCalls.entries()) {
        const result = results[index] as ToolExecution;
        toolCalls++;
        if (!result.ok) failedToolCalls++;
        const base = { tool_call_id: toolCall.id, name: toolCall.function.name };
        wire.push({ role: 'tool', content: result.model, tool_call_id: toolCall.id });
        state.durable.push({
          role: 'tool',
          content: result.persisted,
          ...base,
          ok: result.ok,
          duration_ms: result.durationMs,
        });
      }
      // OpenAI tool messages hold text only: the images of the round follow as one user message, never persisted
      const images = request.acceptsImages === true ? toolImagesMessage(call.toolCalls, results) : null;
      if (images) wire.push(images);
      state.currentContent = '';
    }

    this.logger.log(formatEvent('agent.iteration.limit_reached', { max_iterations: maxIterations }), state.ids);
    // the nudge goes to the model only; it is never persisted
    wire.push({ role: 'user', content: MAX_ITERATIONS_NUDGE });
    const final = await this.callModel(request, state, wire, [], maxIterations + 1);
    modelCalls++;
    return {
      content: final.content,
      durable: state.durable,
      usage: state.usage,
      ...(state.cost ? { cost: state.cost } : {}),
      modelCalls,
      iterationLimitReached: true,
      toolCalls,
      failedToolCalls,
    };
  }

  /** One model call with bounded retries for retryable provider errors while nothing has been streamed. */
  private async callModel(
    request: RunRequest,
    state: TurnState,
    wire: ChatCompletionMessageParam[],
    tools: readonly AgentTool[],
    iteration: number,
  ): Promise<StreamedCall> {
    const maxRetries = Math.max(0, this.config.llmMaxRetries);
    const schemas = tools.map(toolSchema);
    for (let attempt = 0; ; attempt++) {
      const logFields = { provider: request.provider, model: request.model, iteration, attempt };
      // the spend limits are checked before every attempt; a refusal (SpendLimitError) ends the turn unretried
      const reservation = this.reserveCall(request, wire, schemas);
      this.logger.debug(formatEvent('llm.call.started', { ...logFields, tool_count: tools.length }), state.ids);
      const started = performance.now();
      const progress = { emitted: false };
      try {
        const result = await this.streamOnce(request, state, wire, schemas, progress);
        this.settleCall(state, reservation, { outcome: 'ok', usage: result.usage, answerChars: answerChars(result) });
        this.logger.debug(
          formatEvent('llm.call.completed', {
            ...logFields,
            duration_ms: Math.round(performance.now() - started),
            tool_calls: result.toolCalls.length,
          }),
          state.ids,
        );
        return result;
      } catch (err) {
        if (request.signal.aborted) {
          this.settleCall(state, reservation, { outcome: 'cancelled', answerChars: state.currentContent.length });
          this.logger.log(formatEvent('llm.call.cancelled', logFields), state.ids);
          throw err;
        }
        const classified = classifyProviderError(err);
        this.settleCall(state, reservation, { outcome: 'error', errorCode: classified.kind, answerChars: state.currentContent.length });
        const retryAfterTooLong = classified.retryAfterMs !== null && classified.retryAfterMs > RETRY_AFTER_LIMIT_MS;
        const willRetry = classified.retryable && !progress.emitted && attempt < maxRetries && !retryAfterTooLong;
        this.logger.warn(
          formatEvent('llm.call.failed', {
            ...logFields,
            error_kind: classified.kind,
            retry: willRetry,
            streamed: progress.emitted,
          }),
          state.ids,
        );
        if (!willRetry) {
          throw new ModelCallError(
            progress.emitted && classified.retryable
              ? { ...classified, message: `The model stream was interrupted: ${classified.message}` }
              : classified,
          );
        }
        state.currentContent = '';
        const backoff =
          classified.retryAfterMs ?? Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** attempt);
        await abortableSleep(backoff + Math.floor(Math.random() * RETRY_JITTER_MS), request.signal);
      }
    }
  }

  private reserveCall(
    request: RunRequest,
    wire: readonly ChatCompletionMessageParam[],
    schemas: readonly ReturnType<typeof toolSchema>[],
  ): UsageReservation | null {
    if (!this.usage) return null;
    const purpose = request.purpose ?? 'chat';
    return this.usage.reserve({
      provider: request.provider,
      model: request.model,
      purpose,
      ...(purpose === 'chat' ? { chatId: request.chatId } : {}),
      promptChars: requestChars(wire, schemas.length > 0 ? JSON.stringify(schemas).length : 0),
      ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
    });
  }

  private settleCall(state: TurnState, reservation: UsageReservation | null, result: Parameters<UsageService['settle']>[1]): void {
    if (!reservation || !this.usage) return;
    const record = this.usage.settle(reservation, result);
    if (!record || state.cost === null) return;
    if (!record.cost || (state.cost && state.cost.currency !== record.cost.currency)) {
      state.cost = null;
      return;
    }
    state.cost = { amount: Math.round(((state.cost?.amount ?? 0) + record.cost.amount) * 1e9) / 1e9, currency: record.cost.currency };
  }

  /** Streams one completion: deltas are forwarded as they arrive; tool calls are accumulated by index. */
  private async streamOnce(
    request: RunRequest,
    state: TurnState,
    wire: ChatCompletionMessageParam[],
    schemas: readonly ReturnType<typeof toolSchema>[],
    progress: { emitted: boolean },
  ): Promise<StreamedCall> {
    const params: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: wire,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.temperature !== undefined) params.temperature = request.temperature;
    if (request.maxTokens !== undefined) params.max_tokens = request.maxTokens;
    if (schemas.length > 0) {
      params.tools = [...schemas];
      params.tool_choice = 'auto';
    }
    const pending = new Map<number, { id: string; name: string; arguments: string }>();
    let content = '';
    let callUsage: ChatCompletionChunk['usage'] = null;
    // a batch is what one read of the body held; the deltas of one network read leave as one event (delta-coalescer)
    for await (const batch of completionChunkBatches(request.client, params, { signal: request.signal, maxRetries: 0 })) {
      let text = '';
      for (const chunk of batch) {
        if (chunk.usage) callUsage = chunk.usage;
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) continue;
        if (typeof delta.content === 'string') text += delta.content;
        for (const piece of delta.tool_calls ?? []) {
          const index = typeof piece.index === 'number' ? piece.index : pending.size;
          const entry = pending.get(index) ?? { id: '', name: '', arguments: '' };
          if (piece.id) entry.id = piece.id;
          if (piece.function?.name) entry.name += piece.function.name;
          if (piece.function?.arguments) entry.arguments += piece.function.arguments;
          pending.set(index, entry);
        }
      }
      if (text !== '') {
        content += text;
        state.currentContent = content;
        progress.emitted = true;
        state.streamed = true;
        request.listener.delta(text);
      }
    }
    // the stream ends quietly when its request is aborted: a cancelled call must never look like an answer
    if (request.signal.aborted) throw new ToolExecutionCancelledError();
    addUsage(state.usage, callUsage);
    const toolCalls: ToolCallRecord[] = [...pending.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, entry]) => {
        let id = entry.id;
        if (!id || state.usedCallIds.has(id)) id = generateCallId();
        state.usedCallIds.add(id);
        return { id, type: 'function', function: { name: entry.name, arguments: entry.arguments } };
      });
    return { content, toolCalls, usage: callUsage };
  }

  /**
   * Consecutive read-only calls run concurrently (bounded); any other call runs alone, in order. Calls that need a
   * decision (policy `ask`, `deny`, or pre-approved by a rule or Skill) are announced and gated at once when the
   * message's calls start, so the user sees every question of the message together and read-only calls keep running
   * while a call waits for its answer; a call runs only once its gate lets it.
   */
  private async executeCalls(
    request: RunRequest,
    scope: ToolScope,
    calls: readonly ToolCallRecord[],
    ids: LogIds,
  ): Promise<ToolExecution[]> {
    const verdicts = this.openGates(request, scope, calls);
    const results: ToolExecution[] = new Array<ToolExecution>(calls.length);
    let index = 0;
    while (index < calls.length) {
      const first = calls[index] as ToolCallRecord;
      if (!this.tools.isReadOnly(first.function.name)) {
        results[index] = await this.executeOne(request, scope, first, ids, verdicts[index] ?? null);
        index++;
        continue;
      }
      let end = index;
      while (end < calls.length && this.tools.isReadOnly((calls[end] as ToolCallRecord).function.name)) end++;
      let next = index;
      const stop = end;
      const worker = async (): Promise<void> => {
        while (next < stop) {
          const current = next++;
          results[current] = await this.executeOne(request, scope, calls[current] as ToolCallRecord, ids, verdicts[current] ?? null);
        }
      };
      const workers = Array.from({ length: Math.min(READ_ONLY_CONCURRENCY, stop - index) }, () => worker());
      await Promise.all(workers);
      index = end;
    }
    return results;
  }

  /** The approval gates of a message's calls: null for a call that simply runs (or that would not run at all). */
  private openGates(request: RunRequest, scope: ToolScope, calls: readonly ToolCallRecord[]): Array<Promise<ApprovalVerdict> | null> {
    const approvals = this.approvals;
    if (!approvals) return calls.map(() => null);
    const emitter: ApprovalEmitter = {
      request: (event) => request.listener.approvalRequest?.(event),
      resolved: (event) => request.listener.approvalResolved?.(event),
    };
    return calls.map((call) => {
      const tool = this.tools.runnable(call.function.name, scope);
      // unknown, not activated or with invalid arguments: the registry answers without running anything
      if (!tool || !parseToolArguments(call.function.arguments).ok) return null;
      const gate = approvals.gate({
        chatId: request.chatId,
        turnId: request.turnId,
        callId: call.id,
        tool,
        rawArguments: call.function.arguments,
        ...(request.headless === true ? { headless: true } : {}),
      });
      if (gate.plainAllow) return null;
      this.announce(request, call);
      const verdict = gate.open(emitter, request.signal);
      // settled by the decision, the timeout or the cancel even when the turn ends before the call's turn comes
      verdict.catch(() => undefined);
      return verdict;
    });
  }

  private announce(request: RunRequest, call: ToolCallRecord): void {
    request.listener.toolCall({ callId: call.id, name: call.function.name, arguments: argumentPreview(call.function.arguments) });
  }

  private async executeOne(
    request: RunRequest,
    scope: ToolScope,
    call: ToolCallRecord,
    ids: LogIds,
    gate: Promise<ApprovalVerdict> | null,
  ): Promise<ToolExecution> {
    const name = call.function.name;
    const logFields = { tool: name, call_id: call.id };
    if (gate === null) this.announce(request, call);
    else {
      const verdict = await gate;
      if (request.signal.aborted) {
        this.logger.log(formatEvent('tool.execution.cancelled', logFields), ids);
        throw new ToolExecutionCancelledError();
      }
      if (!verdict.run) {
        this.logger.log(formatEvent('tool.execution.denied', logFields), ids);
        const denied: ToolExecution = { name, model: verdict.model, public: verdict.model, persisted: verdict.model, ok: false, durationMs: 0 };
        request.listener.toolResult({
          callId: call.id,
          name,
          result: firstCodePoints(denied.public, TOOL_RESULT_PREVIEW_CHARS),
          ok: false,
          durationMs: 0,
        });
        return denied;
      }
    }
    this.logger.debug(formatEvent('tool.execution.started', logFields), ids);
    let result: ToolExecution;
    try {
      result = await this.tools.execute(
        name,
        call.function.arguments,
        {
          chatId: request.chatId,
          turnId: request.turnId,
          signal: request.signal,
          progress: (update) => request.listener.toolProgress?.({ callId: call.id, name, ...update }),
          elicit: (ask) =>
            this.elicitations && request.listener.elicitation && request.headless !== true
              ? this.elicitations.request({
                  ...ask,
                  chatId: request.chatId,
                  callId: call.id,
                  toolName: name,
                  signal: request.signal,
                  emit: (event) => request.listener.elicitation?.(event),
                })
              : Promise.resolve({ action: 'decline' }),
        },
        scope,
      );
    } catch (err) {
      if (err instanceof ToolExecutionCancelledError) {
        this.logger.log(formatEvent('tool.execution.cancelled', logFields), ids);
      }
      throw err;
    }
    this.logger.log(
      formatEvent(result.ok ? 'tool.execution.completed' : 'tool.execution.failed', {
        ...logFields,
        duration_ms: result.durationMs,
        result_length: result.model.length,
      }),
      ids,
    );
    request.listener.toolResult({
      callId: call.id,
      name,
      result: firstCodePoints(result.public, TOOL_RESULT_PREVIEW_CHARS),
      ok: result.ok,
      durationMs: result.durationMs,
    });
    return this.applyOutputBudget(request, call, result, ids);
  }

  /**
   * A result whose whole text would go to the model and to the history (persisted = model) and is over the budget is
   * kept as an artifact; both get the preview instead (tool-output-budget.ts). Results with their own persisted form
   * (skill_load's receipt) are left alone: their full text is meant for this turn only.
   */
  private async applyOutputBudget(request: RunRequest, call: ToolCallRecord, result: ToolExecution, ids: LogIds): Promise<ToolExecution> {
    if (!this.artifacts || result.persisted !== result.model) return result;
    try {
      const preview = await budgetToolResult(this.artifacts, this.config.toolOutputBudgetChars, request.chatId, call.id, result.name, result.model);
      if (preview === null) return result;
      this.logger.log(formatEvent('tool.result.artifact', { tool: result.name, call_id: call.id, chars: result.model.length }), ids);
      return { ...result, model: preview, persisted: preview };
    } catch (err) {
      this.logger.warn(formatEvent('tool.result.artifact_failed', { tool: result.name, error: (err as Error).name }), ids);
      return result;
    }
  }
}
