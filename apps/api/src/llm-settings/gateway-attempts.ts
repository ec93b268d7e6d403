/**
 * What every model gateway shares (openspec agent-runner "Requirement: Provider errors and retries", openspec usage):
 * the call and answer shapes (the agent's ModelCall and ModelAnswer, agent/model-gateway.ts, are these), and the
 * attempt loop. Before every attempt the usage ledger reserves an estimate (a spend limit refuses
 * the call with SpendLimitError, unretried); every attempt is settled, answered, failed or cancelled. Provider errors
 * are classified once; retryable kinds are retried with exponential backoff and jitter (honouring Retry-After up to a
 * limit) while no text of that call has reached the client.
 */
import { Logger } from '@nestjs/common';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmProvider, Money, TokenUsage } from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import type { AppConfig } from '../config/app-config';
import { reportedCachedTokens, reportedCacheWriteTokens, type ReportedUsage } from '../usage/reported-usage';
import type { ModelCallGuard, UsageService, UsageReservation } from '../usage/usage.service';
import { ModelCallError } from './llm-provider';
import { classifyProviderError } from './provider-errors';
import type { ProviderClient } from './provider-client';
import type { ModelToolCall } from './tool-call-accumulator';

const RETRY_BASE_DELAY_MS = 500;
const RETRY_MAX_DELAY_MS = 8_000;
/** a provider asking us to wait longer than this gets a clear error instead of a silent wait */
const RETRY_AFTER_LIMIT_MS = 30_000;
const RETRY_JITTER_MS = 250;

/** Characters an image part counts as in a spend-limit estimate (about 750 tokens; providers price images apart). */
export const IMAGE_PART_ESTIMATE_CHARS = 3000;

/**
 * A message of the conversation (the OpenAI chat format, the canonical one); `replay` is what the loop hands back on
 * an assistant message within the turn (e.g. Anthropic's signed thinking blocks), never persisted.
 */
export type GatewayMessage = ChatCompletionMessageParam & { replay?: unknown };

/** One call of a gateway (the agent's ModelCall). */
export interface GatewayCall {
  /** the provider's SDK client (from the turn's lease) */
  client: ProviderClient;
  provider: LlmProvider;
  model: string;
  /** the conversation as the model gets it */
  messages: readonly GatewayMessage[];
  /** the tool schemas the model may call (none: answer in text) */
  tools: readonly ChatCompletionFunctionTool[];
  temperature?: number;
  maxTokens?: number;
  /**
   * what the call is recorded as in the usage ledger: a chat turn, a stateless `/v1` request, or a sub-agent of a chat
   * turn (recorded with the parent chat's id)
   */
  purpose: 'chat' | 'api' | 'subagent';
  chatId: string;
  /** a budget of the caller's own (a sub-agent's tokens), checked before every attempt with the spend limits */
  budget?: ModelCallGuard;
  /** the loop's iteration (log lines) */
  iteration: number;
  ids: LogIds;
  signal: AbortSignal;
  /** each piece of answer text as it arrives (one network read's worth at a time) */
  onDelta(text: string): void;
  /** each piece of reasoning as it arrives, never part of the answer text */
  onReasoning?(text: string): void;
  /**
   * the ledger settled an attempt (answered, failed or cancelled): its cost, or null when the model has no price;
   * called once per attempt, before the call resolves or rejects
   */
  onSettled(cost: Money | null): void;
}

/** The answer of one call (the agent's ModelAnswer). */
export interface GatewayAnswer {
  content: string;
  /** tool calls in the model's order; an id may be empty or reused (the loop makes them unique) */
  toolCalls: ModelToolCall[];
  /** the tokens the provider reported for this call (null: nothing reported) */
  usage: TokenUsage | null;
  /** the call's reasoning text (absent: none) */
  reasoning?: string;
  /** what the loop hands back on this answer's assistant message within the turn */
  replay?: unknown;
  /**
   * why the model stopped: `length` when it hit its output limit (`max_tokens`; the answer is cut and a `continue`
   * carries on), else `stop` / `tool_calls` (absent: the provider did not say)
   */
  finishReason?: 'stop' | 'length' | 'tool_calls';
}

/** One attempt's answer with the usage as the provider reported it. */
export interface AttemptAnswer extends Omit<GatewayAnswer, 'usage'> {
  reported: ReportedUsage | null;
}

/** The call was aborted while its stream was being read (the stream then ends quietly). */
export class StreamAbortedError extends Error {
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

/** The provider's reported usage as token counts (cache reads and writes only when reported). */
export function tokenUsage(usage: ReportedUsage | null): TokenUsage | null {
  if (!usage) return null;
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  const total: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage.total_tokens ?? prompt + completion };
  const cached = reportedCachedTokens(usage);
  if (cached !== undefined) total.cached_tokens = cached;
  const written = reportedCacheWriteTokens(usage);
  if (written !== undefined) total.cache_write_tokens = written;
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

/** The attempt loop of a gateway: reserve, attempt, settle, classify, retry. */
export class GatewayAttempts {
  private readonly logger = new Logger('ModelGateway');

  constructor(
    private readonly config: AppConfig,
    private readonly usage: UsageService,
  ) {}

  /**
   * Runs `attempt` until it answers or fails for good. `progress.content` is the answer text the attempt has delivered
   * (a call that streamed text is never retried).
   */
  async run(call: GatewayCall, attempt: (progress: { content: string }) => Promise<AttemptAnswer>): Promise<GatewayAnswer> {
    const maxRetries = Math.max(0, this.config.llmMaxRetries);
    for (let index = 0; ; index++) {
      const logFields = { provider: call.provider, model: call.model, iteration: call.iteration, attempt: index };
      // the spend limits are checked before every attempt; a refusal (SpendLimitError) ends the turn unretried
      const reservation = this.reserve(call);
      this.logger.debug(formatEvent('llm.call.started', { ...logFields, tool_count: call.tools.length }), call.ids);
      const started = performance.now();
      const progress = { content: '' };
      try {
        const { reported, ...answer } = await attempt(progress);
        this.settle(call, reservation, { outcome: 'ok', usage: reported, answerChars: answerChars(answer.content, answer.toolCalls) });
        this.logger.debug(
          formatEvent('llm.call.completed', {
            ...logFields,
            duration_ms: Math.round(performance.now() - started),
            tool_calls: answer.toolCalls.length,
          }),
          call.ids,
        );
        return { ...answer, usage: tokenUsage(reported) };
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
        const willRetry = classified.retryable && !streamed && index < maxRetries && !retryAfterTooLong;
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
        const backoff = classified.retryAfterMs ?? Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** index);
        await abortableSleep(backoff + Math.floor(Math.random() * RETRY_JITTER_MS), call.signal);
      }
    }
  }

  private reserve(call: GatewayCall): UsageReservation {
    return this.usage.reserve({
      provider: call.provider,
      model: call.model,
      purpose: call.purpose,
      ...(call.purpose !== 'api' ? { chatId: call.chatId } : {}),
      promptChars: requestChars(call.messages, call.tools.length > 0 ? JSON.stringify(call.tools).length : 0),
      ...(call.maxTokens !== undefined ? { maxOutputTokens: call.maxTokens } : {}),
      ...(call.budget ? { budget: call.budget } : {}),
    });
  }

  private settle(call: GatewayCall, reservation: UsageReservation, result: Parameters<UsageService['settle']>[1]): void {
    const record = this.usage.settle(reservation, result);
    if (record) call.onSettled(record.cost ?? null);
  }
}
