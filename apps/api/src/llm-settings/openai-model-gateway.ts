/**
 * The model gateway for the OpenAI chat-completions protocol (the agent's ModelGateway, `agent/model-gateway.ts`;
 * openspec agent-runner "Requirement: Real streaming" and llm-settings "Requirement: Provider error classification"),
 * which serves OpenAI-compatible servers and Ollama alike.
 *
 * One `complete` is one model call: `stream: true` with usage included, text forwarded as it arrives (one piece per
 * network read), tool calls accumulated across chunks (tool-call-accumulator.ts, which tolerates the quirks of real
 * servers). Reasoning is kept apart from the answer: `reasoning_content` / `reasoning` deltas (DeepSeek, vLLM,
 * llama.cpp, OpenRouter, Ollama) and a leading `<think>` block in the content (reasoning-split.ts) go to
 * `onReasoning`. Within a tool loop the reasoning goes back on the assistant message in the field it came in (DeepSeek
 * asks for it there while the tool calls of one question run; other servers ignore it); later turns never send it. Provider errors are classified once; retryable kinds
 * are retried with exponential backoff and jitter (honouring Retry-After up to a limit) while no text of that call has
 * reached the client. Before every attempt the usage ledger reserves an estimate (a spend limit refuses the call with
 * SpendLimitError, unretried); every attempt is settled, answered, failed or cancelled.
 *
 * The request body is the SDK's own: the params are serialised by the `openai` SDK on every call.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { LlmProvider, Money, TokenUsage } from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { reportedCachedTokens } from '../usage/reported-usage';
import { UsageService, type UsageReservation } from '../usage/usage.service';
import { completionChunkBatches } from './completion-stream';
import { ModelCallError } from './llm-provider';
import { classifyProviderError } from './provider-errors';
import { ThinkTagSplitter } from './reasoning-split';
import { ToolCallAccumulator, type ModelToolCall } from './tool-call-accumulator';

export type { ModelToolCall } from './tool-call-accumulator';

const RETRY_BASE_DELAY_MS = 500;
const RETRY_MAX_DELAY_MS = 8_000;
/** a provider asking us to wait longer than this gets a clear error instead of a silent wait */
const RETRY_AFTER_LIMIT_MS = 30_000;
const RETRY_JITTER_MS = 250;

/** Characters an image part counts as in a spend-limit estimate (about 750 tokens; providers price images apart). */
export const IMAGE_PART_ESTIMATE_CHARS = 3000;

/** What one call of the gateway gets (the agent's ModelCall, restated here: llm-settings sits below the agent). */
export interface OpenAiModelCall {
  client: OpenAI;
  provider: LlmProvider;
  model: string;
  messages: readonly (ChatCompletionMessageParam & { replay?: unknown })[];
  tools: readonly ChatCompletionFunctionTool[];
  temperature?: number;
  maxTokens?: number;
  purpose: 'chat' | 'api';
  chatId: string;
  iteration: number;
  ids: LogIds;
  signal: AbortSignal;
  onDelta(text: string): void;
  onReasoning?(text: string): void;
  onSettled(cost: Money | null): void;
}

export interface OpenAiModelAnswer {
  content: string;
  toolCalls: ModelToolCall[];
  usage: TokenUsage | null;
  reasoning?: string;
  replay?: ReasoningReplay;
  finishReason?: 'stop' | 'length' | 'tool_calls';
}

/** Reasoning handed back on the assistant message of a tool loop, in the field the provider streamed it in. */
export interface ReasoningReplay {
  field: 'reasoning_content' | 'reasoning';
  text: string;
}

function isReasoningReplay(value: unknown): value is ReasoningReplay {
  const record = value as Partial<ReasoningReplay> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    (record.field === 'reasoning_content' || record.field === 'reasoning') &&
    typeof record.text === 'string'
  );
}

/** A message as sent: without the loop's `replay`, with a reasoning replay in its provider's field. */
function outgoingMessage(message: ChatCompletionMessageParam & { replay?: unknown }): ChatCompletionMessageParam {
  if (!('replay' in message)) return message;
  const { replay, ...rest } = message;
  return isReasoningReplay(replay) ? ({ ...rest, [replay.field]: replay.text } as ChatCompletionMessageParam) : rest;
}

/** The reasoning text of a delta and the field it came in (`reasoning_content` first: servers may send both). */
function deltaReasoning(delta: Record<string, unknown>): { field: ReasoningReplay['field']; text: string } | null {
  const content = delta['reasoning_content'];
  if (typeof content === 'string' && content !== '') return { field: 'reasoning_content', text: content };
  const reasoning = delta['reasoning'];
  if (typeof reasoning === 'string' && reasoning !== '') return { field: 'reasoning', text: reasoning };
  return null;
}

function finishReasonOf(value: unknown): OpenAiModelAnswer['finishReason'] | undefined {
  return value === 'stop' || value === 'length' || value === 'tool_calls' ? value : undefined;
}

/** The call was aborted while its stream was being read (the stream then ends quietly). */
class StreamAbortedError extends Error {
  constructor() {
    super('The model call was cancelled.');
    this.name = 'StreamAbortedError';
  }
}

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

/** The provider's reported usage as token counts (cached prompt tokens only when reported). */
function tokenUsage(usage: ChatCompletionChunk['usage'] | null): TokenUsage | null {
  if (!usage) return null;
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  const total: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage.total_tokens ?? prompt + completion };
  const cached = reportedCachedTokens(usage);
  if (cached !== undefined) total.cached_tokens = cached;
  return total;
}

/** Characters of an answer (text and tool calls) for an estimate when the provider reports no usage. */
function answerChars(content: string, toolCalls: readonly ModelToolCall[]): number {
  let chars = content.length;
  for (const toolCall of toolCalls) chars += toolCall.function.name.length + toolCall.function.arguments.length;
  return chars;
}

/** Resolves after `ms`, or rejects at once when the signal aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new StreamAbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new StreamAbortedError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

@Injectable()
export class OpenAiModelGateway {
  private readonly logger = new Logger('ModelGateway');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly usage: UsageService,
  ) {}

  async complete(call: OpenAiModelCall): Promise<OpenAiModelAnswer> {
    const maxRetries = Math.max(0, this.config.llmMaxRetries);
    for (let attempt = 0; ; attempt++) {
      const logFields = { provider: call.provider, model: call.model, iteration: call.iteration, attempt };
      // the spend limits are checked before every attempt; a refusal (SpendLimitError) ends the turn unretried
      const reservation = this.reserve(call);
      this.logger.debug(formatEvent('llm.call.started', { ...logFields, tool_count: call.tools.length }), call.ids);
      const started = performance.now();
      const progress = { content: '' };
      try {
        const answer = await this.streamOnce(call, progress);
        this.settle(call, reservation, { outcome: 'ok', usage: answer.reported, answerChars: answerChars(answer.content, answer.toolCalls) });
        this.logger.debug(
          formatEvent('llm.call.completed', {
            ...logFields,
            duration_ms: Math.round(performance.now() - started),
            tool_calls: answer.toolCalls.length,
          }),
          call.ids,
        );
        return {
          content: answer.content,
          toolCalls: answer.toolCalls,
          usage: tokenUsage(answer.reported),
          ...(answer.reasoning !== '' ? { reasoning: answer.reasoning } : {}),
          ...(answer.replay ? { replay: answer.replay } : {}),
          ...(answer.finishReason ? { finishReason: answer.finishReason } : {}),
        };
      } catch (err) {
        if (call.signal.aborted) {
          this.settle(call, reservation, { outcome: 'cancelled', answerChars: progress.content.length });
          this.logger.log(formatEvent('llm.call.cancelled', logFields), call.ids);
          throw err;
        }
        const classified = classifyProviderError(err);
        this.settle(call, reservation, { outcome: 'error', errorCode: classified.kind, answerChars: progress.content.length });
        const streamed = progress.content !== '';
        const retryAfterTooLong = classified.retryAfterMs !== null && classified.retryAfterMs > RETRY_AFTER_LIMIT_MS;
        const willRetry = classified.retryable && !streamed && attempt < maxRetries && !retryAfterTooLong;
        this.logger.warn(
          formatEvent('llm.call.failed', { ...logFields, error_kind: classified.kind, retry: willRetry, streamed }),
          call.ids,
        );
        if (!willRetry) {
          throw new ModelCallError(
            streamed && classified.retryable
              ? { ...classified, message: `The model stream was interrupted: ${classified.message}` }
              : classified,
          );
        }
        const backoff = classified.retryAfterMs ?? Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** attempt);
        await abortableSleep(backoff + Math.floor(Math.random() * RETRY_JITTER_MS), call.signal);
      }
    }
  }

  private reserve(call: OpenAiModelCall): UsageReservation {
    return this.usage.reserve({
      provider: call.provider,
      model: call.model,
      purpose: call.purpose,
      ...(call.purpose === 'chat' ? { chatId: call.chatId } : {}),
      promptChars: requestChars(call.messages, call.tools.length > 0 ? JSON.stringify(call.tools).length : 0),
      ...(call.maxTokens !== undefined ? { maxOutputTokens: call.maxTokens } : {}),
    });
  }

  private settle(call: OpenAiModelCall, reservation: UsageReservation, result: Parameters<UsageService['settle']>[1]): void {
    const record = this.usage.settle(reservation, result);
    if (record) call.onSettled(record.cost ?? null);
  }

  /** Streams one completion: text and reasoning are forwarded as they arrive; tool calls are accumulated. */
  private async streamOnce(
    call: OpenAiModelCall,
    progress: { content: string },
  ): Promise<{
    content: string;
    toolCalls: ModelToolCall[];
    reported: ChatCompletionChunk['usage'] | null;
    reasoning: string;
    replay?: ReasoningReplay;
    finishReason?: OpenAiModelAnswer['finishReason'];
  }> {
    const params: ChatCompletionCreateParamsStreaming = {
      model: call.model,
      messages: call.messages.map(outgoingMessage),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (call.temperature !== undefined) params.temperature = call.temperature;
    if (call.maxTokens !== undefined) params.max_tokens = call.maxTokens;
    if (call.tools.length > 0) {
      params.tools = [...call.tools];
      params.tool_choice = 'auto';
    }
    const toolCalls = new ToolCallAccumulator();
    const think = new ThinkTagSplitter();
    let reported: ChatCompletionChunk['usage'] = null;
    let reasoning = '';
    let reasoningField: ReasoningReplay['field'] | null = null;
    let finishReason: OpenAiModelAnswer['finishReason'];
    const emit = (text: string, thought: string): void => {
      if (thought !== '') {
        reasoning += thought;
        call.onReasoning?.(thought);
      }
      if (text !== '') {
        progress.content += text;
        call.onDelta(text);
      }
    };
    // a batch is what one read of the body held; the deltas of one network read leave as one event (delta-coalescer)
    for await (const batch of completionChunkBatches(call.client, params, { signal: call.signal, maxRetries: 0 })) {
      let text = '';
      let thought = '';
      for (const chunk of batch) {
        // usage may come with the last choice, in a chunk of its own, or not at all
        if (chunk.usage) reported = chunk.usage;
        const choice = chunk.choices?.[0];
        finishReason = finishReasonOf(choice?.finish_reason) ?? finishReason;
        const delta = choice?.delta as Record<string, unknown> | undefined;
        if (!delta) continue;
        const fromField = deltaReasoning(delta);
        if (fromField) {
          thought += fromField.text;
          reasoningField ??= fromField.field;
        }
        if (typeof delta['content'] === 'string') {
          const split = think.push(delta['content']);
          text += split.answer;
          thought += split.reasoning;
        }
        if (Array.isArray(delta['tool_calls'])) for (const piece of delta['tool_calls']) toolCalls.add(piece);
      }
      emit(text, thought);
    }
    // the stream ends quietly when its request is aborted: a cancelled call must never look like an answer
    if (call.signal.aborted) throw new StreamAbortedError();
    const rest = think.end();
    emit(rest.answer, rest.reasoning);
    const calls = toolCalls.result();
    // only a reasoning field goes back, within the tool loop: a `<think>` block is the model's own text
    const replay = calls.length > 0 && reasoningField !== null && reasoning !== '' ? { field: reasoningField, text: reasoning } : undefined;
    return { content: progress.content, toolCalls: calls, reported, reasoning, ...(replay ? { replay } : {}), ...(finishReason ? { finishReason } : {}) };
  }
}
