/**
 * The model gateway for the OpenAI chat-completions protocol (the agent's ModelGateway, `agent/model-gateway.ts`;
 * openspec agent-runner "Requirement: Real streaming" and llm-settings "Requirement: Provider error classification"),
 * which serves OpenAI-compatible servers and Ollama alike.
 *
 * One `complete` is one model call: `stream: true` with usage included, text forwarded as it arrives (one piece per
 * network read), tool calls accumulated by index across chunks. Provider errors are classified once; retryable kinds
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

const RETRY_BASE_DELAY_MS = 500;
const RETRY_MAX_DELAY_MS = 8_000;
/** a provider asking us to wait longer than this gets a clear error instead of a silent wait */
const RETRY_AFTER_LIMIT_MS = 30_000;
const RETRY_JITTER_MS = 250;

/** A tool call as the model made it (an id may be empty or reused: the agent makes them unique). */
export interface ModelToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Characters an image part counts as in a spend-limit estimate (about 750 tokens; providers price images apart). */
export const IMAGE_PART_ESTIMATE_CHARS = 3000;

/** What one call of the gateway gets (the agent's ModelCall, restated here: llm-settings sits below the agent). */
export interface OpenAiModelCall {
  client: OpenAI;
  provider: LlmProvider;
  model: string;
  messages: readonly ChatCompletionMessageParam[];
  tools: readonly ChatCompletionFunctionTool[];
  temperature?: number;
  maxTokens?: number;
  purpose: 'chat' | 'api';
  chatId: string;
  iteration: number;
  ids: LogIds;
  signal: AbortSignal;
  onDelta(text: string): void;
  onSettled(cost: Money | null): void;
}

export interface OpenAiModelAnswer {
  content: string;
  toolCalls: ModelToolCall[];
  usage: TokenUsage | null;
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
        return { content: answer.content, toolCalls: answer.toolCalls, usage: tokenUsage(answer.reported) };
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

  /** Streams one completion: text is forwarded as it arrives; tool calls are accumulated by index. */
  private async streamOnce(
    call: OpenAiModelCall,
    progress: { content: string },
  ): Promise<{ content: string; toolCalls: ModelToolCall[]; reported: ChatCompletionChunk['usage'] | null }> {
    const params: ChatCompletionCreateParamsStreaming = {
      model: call.model,
      messages: [...call.messages],
      stream: true,
      stream_options: { include_usage: true },
    };
    if (call.temperature !== undefined) params.temperature = call.temperature;
    if (call.maxTokens !== undefined) params.max_tokens = call.maxTokens;
    if (call.tools.length > 0) {
      params.tools = [...call.tools];
      params.tool_choice = 'auto';
    }
    const pending = new Map<number, { id: string; name: string; arguments: string }>();
    let reported: ChatCompletionChunk['usage'] = null;
    // a batch is what one read of the body held; the deltas of one network read leave as one event (delta-coalescer)
    for await (const batch of completionChunkBatches(call.client, params, { signal: call.signal, maxRetries: 0 })) {
      let text = '';
      for (const chunk of batch) {
        if (chunk.usage) reported = chunk.usage;
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
        progress.content += text;
        call.onDelta(text);
      }
    }
    // the stream ends quietly when its request is aborted: a cancelled call must never look like an answer
    if (call.signal.aborted) throw new StreamAbortedError();
    const toolCalls: ModelToolCall[] = [...pending.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, entry]) => ({ id: entry.id, type: 'function', function: { name: entry.name, arguments: entry.arguments } }));
    return { content: progress.content, toolCalls, reported };
  }
}
