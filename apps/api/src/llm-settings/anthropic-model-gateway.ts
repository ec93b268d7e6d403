/**
 * The model gateway for Anthropic's Messages API (the agent's ModelGateway, `agent/model-gateway.ts`; openspec
 * llm-settings "Requirement: Anthropic provider"), through the official `@anthropic-ai/sdk` with `stream: true`. The
 * request body is built by anthropic-messages.ts (cache breakpoints included); the attempt loop (retries, spend limits,
 * the usage ledger) is `gateway-attempts.ts`, shared with the OpenAI gateway.
 *
 * The stream's events (`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`,
 * `ping`, `error`) map to the loop's answer: `text_delta` → answer text (`onDelta`), `thinking_delta` → reasoning
 * (`onReasoning`), `tool_use` blocks with their `input_json_delta` fragments → tool calls, `stop_reason` → the finish
 * reason (`max_tokens` → `length`: the answer is cut, its unfinished tool calls dropped; `tool_use` → `tool_calls`;
 * `pause_turn` and `model_context_window_exceeded` → `length` too: the answer stopped early and continue sends it back,
 * as the API asks; `refusal` fails the call with a fixed message, so the refused answer never stays in the history,
 * which the API requires before the conversation goes on). Only a `tool_use` block whose `content_block_stop` came is
 * a tool call; unknown block, delta and event types (server tools, citations, later additions) are skipped; a body that
 * ends before the message's stop reason (`message_delta`) or `message_stop` is a cut connection, not an answer.
 * Thinking blocks (with their signatures) and redacted thinking blocks come back as `replay` when the answer calls
 * tools: the loop sends them back unchanged on that assistant message, as the API requires within a tool loop.
 * Usage: `input_tokens` plus the cache reads and writes are the prompt (anthropic-usage.ts).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UsageService } from '../usage/usage.service';
import { anthropicRequest } from './anthropic-messages';
import { anthropicReportedUsage, mergeAnthropicUsage, type AnthropicUsage } from './anthropic-usage';
import { GatewayAttempts, StreamAbortedError, type AttemptAnswer, type GatewayAnswer, type GatewayCall } from './gateway-attempts';
import { ModelCallError } from './llm-provider';
import { LlmSettingsService } from './llm-settings.service';
import { PROVIDER_ERROR_MESSAGES } from './provider-errors';
import { isAnthropicClient } from './provider-client';
import type { ModelToolCall } from './tool-call-accumulator';

/** The answer bound when the caller sets none (the API requires one); older Claude 3 models allow 4096. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;
const CLAUDE_3_MAX_TOKENS = 4096;
/** The thinking budget of a model with extended thinking on (added to the answer bound: it must stay below it). */
export const ANTHROPIC_THINKING_BUDGET = 4096;

/** The answer bound of a model when the caller sets none. */
export function defaultMaxTokens(model: string): number {
  return /^claude-3-(?:haiku|sonnet|opus)/.test(model) ? CLAUDE_3_MAX_TOKENS : ANTHROPIC_DEFAULT_MAX_TOKENS;
}

type Block =
  | { type: 'text' }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string; input: unknown; stopped: boolean }
  | { type: 'other' };

function startBlock(raw: Record<string, unknown>): Block {
  switch (raw['type']) {
    case 'text':
      return { type: 'text' };
    case 'thinking':
      return { type: 'thinking', thinking: typeof raw['thinking'] === 'string' ? raw['thinking'] : '', signature: typeof raw['signature'] === 'string' ? raw['signature'] : '' };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: typeof raw['data'] === 'string' ? raw['data'] : '' };
    case 'tool_use':
      return {
        type: 'tool_use',
        id: typeof raw['id'] === 'string' ? raw['id'] : '',
        name: typeof raw['name'] === 'string' ? raw['name'] : '',
        json: '',
        input: raw['input'],
        stopped: false,
      };
    default:
      return { type: 'other' };
  }
}

function finishReasonOf(stopReason: unknown): GatewayAnswer['finishReason'] | undefined {
  if (stopReason === 'max_tokens' || stopReason === 'pause_turn' || stopReason === 'model_context_window_exceeded') return 'length';
  if (stopReason === 'tool_use') return 'tool_calls';
  return typeof stopReason === 'string' ? 'stop' : undefined;
}

/** A tool_use block's arguments as JSON text: the streamed fragments, else its start input. */
function toolArguments(block: Extract<Block, { type: 'tool_use' }>): string {
  if (block.json !== '') return block.json;
  const input = block.input;
  return typeof input === 'object' && input !== null && Object.keys(input).length > 0 ? JSON.stringify(input) : '{}';
}

@Injectable()
export class AnthropicModelGateway {
  private readonly attempts: GatewayAttempts;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    usage: UsageService,
    private readonly settings: LlmSettingsService,
  ) {
    this.attempts = new GatewayAttempts(config, usage);
  }

  complete(call: GatewayCall): Promise<GatewayAnswer> {
    return this.attempts.run(call, (progress) => this.streamOnce(call, progress));
  }

  private async streamOnce(call: GatewayCall, progress: { content: string }): Promise<AttemptAnswer> {
    const client = call.client;
    if (!isAnthropicClient(client)) throw new Error('the Anthropic gateway needs an Anthropic client');
    const thinking = this.settings.thinkingEnabled(call.provider, call.model);
    const answerBound = call.maxTokens ?? defaultMaxTokens(call.model);
    const params = anthropicRequest(call.messages, call.tools, {
      model: call.model,
      maxTokens: thinking ? answerBound + ANTHROPIC_THINKING_BUDGET : answerBound,
      ...(thinking ? { thinkingBudget: ANTHROPIC_THINKING_BUDGET } : {}),
    });
    const stream = await client.messages.create(params, { signal: call.signal, maxRetries: 0 });
    const blocks = new Map<number, Block>();
    let usage: AnthropicUsage | null = null;
    let reasoning = '';
    let finishReason: GatewayAnswer['finishReason'];
    let refused = false;
    /** a `message_delta` with its stop reason, or `message_stop`, arrived: the answer is whole */
    let ended = false;
    for await (const raw of stream) {
      const event = raw as unknown as Record<string, unknown>;
      switch (event['type']) {
        case 'message_start':
          usage = mergeAnthropicUsage(usage, (event['message'] as { usage?: AnthropicUsage } | undefined)?.usage);
          break;
        case 'content_block_start':
          blocks.set(event['index'] as number, startBlock((event['content_block'] ?? {}) as Record<string, unknown>));
          break;
        case 'content_block_delta': {
          const block = blocks.get(event['index'] as number);
          const delta = (event['delta'] ?? {}) as Record<string, unknown>;
          if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string' && delta['text'] !== '') {
            progress.content += delta['text'];
            call.onDelta(delta['text']);
          } else if (delta['type'] === 'thinking_delta' && typeof delta['thinking'] === 'string') {
            if (block?.type === 'thinking') block.thinking += delta['thinking'];
            if (delta['thinking'] !== '') {
              reasoning += delta['thinking'];
              call.onReasoning?.(delta['thinking']);
            }
          } else if (delta['type'] === 'signature_delta' && block?.type === 'thinking' && typeof delta['signature'] === 'string') {
            block.signature += delta['signature'];
          } else if (delta['type'] === 'input_json_delta' && block?.type === 'tool_use' && typeof delta['partial_json'] === 'string') {
            block.json += delta['partial_json'];
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(event['index'] as number);
          if (block?.type === 'tool_use') block.stopped = true;
          break;
        }
        case 'message_delta': {
          usage = mergeAnthropicUsage(usage, event['usage'] as AnthropicUsage | undefined);
          const stopReason = (event['delta'] as { stop_reason?: unknown } | undefined)?.stop_reason;
          if (stopReason === 'refusal') refused = true;
          if (typeof stopReason === 'string') ended = true;
          finishReason = finishReasonOf(stopReason) ?? finishReason;
          break;
        }
        case 'message_stop':
          ended = true;
          break;
        default:
          break;
      }
    }
    // the stream ends quietly when its request is aborted: a cancelled call must never look like an answer
    if (call.signal.aborted) throw new StreamAbortedError();
    // the body ended without the message's end: the connection was cut (retried while nothing was shown)
    if (!ended) {
      throw new ModelCallError({ kind: 'transient', retryable: true, retryAfterMs: null, message: PROVIDER_ERROR_MESSAGES.transient });
    }
    if (refused) {
      throw new ModelCallError({ kind: 'fatal', retryable: false, retryAfterMs: null, message: PROVIDER_ERROR_MESSAGES.refusal });
    }
    const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    // a tool call cut by the output limit never runs: its arguments are incomplete
    const toolCalls: ModelToolCall[] =
      finishReason === 'length'
        ? []
        : ordered.flatMap((block) =>
            block.type === 'tool_use' && block.stopped
              ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: toolArguments(block) } }]
              : [],
          );
    const replay: ContentBlockParam[] = ordered.flatMap((block): ContentBlockParam[] => {
      if (block.type === 'thinking') return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
      if (block.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: block.data }];
      return [];
    });
    return {
      content: progress.content,
      toolCalls,
      reported: anthropicReportedUsage(usage),
      ...(reasoning !== '' ? { reasoning } : {}),
      ...(toolCalls.length > 0 && replay.length > 0 ? { replay } : {}),
      ...(finishReason ? { finishReason } : {}),
    };
  }
}
