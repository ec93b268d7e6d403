/**
 * The model gateway for the OpenAI chat-completions protocol (the agent's ModelGateway, `agent/model-gateway.ts`;
 * openspec agent-runner "Requirement: Real streaming" and llm-settings "Requirement: Provider error classification"),
 * which serves OpenAI-compatible servers and Ollama alike. The attempt loop (retries, spend limits, the usage ledger)
 * is `gateway-attempts.ts`.
 *
 * One attempt is `stream: true` with usage included, text forwarded as it arrives (one piece per network read), tool
 * calls accumulated across chunks (tool-call-accumulator.ts, which tolerates the quirks of real servers). Reasoning is
 * kept apart from the answer: `reasoning_content` / `reasoning` deltas (DeepSeek, vLLM, llama.cpp, OpenRouter, Ollama)
 * and a leading `<think>` block in the content (reasoning-split.ts) go to `onReasoning`. Within a tool loop the
 * reasoning goes back on the assistant message in the field it came in (DeepSeek asks for it there while the tool
 * calls of one question run; other servers ignore it); later turns never send it.
 *
 * The request body is the SDK's own: the params are serialised by the `openai` SDK on every call.
 */
import { Inject, Injectable } from '@nestjs/common';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UsageService } from '../usage/usage.service';
import { completionChunkBatches } from './completion-stream';
import {
  GatewayAttempts,
  StreamAbortedError,
  type AttemptAnswer,
  type GatewayAnswer,
  type GatewayCall,
  type GatewayMessage,
} from './gateway-attempts';
import { openAiClient } from './provider-client';
import { ThinkTagSplitter } from './reasoning-split';
import { ToolCallAccumulator } from './tool-call-accumulator';

export type { ModelToolCall } from './tool-call-accumulator';
export { IMAGE_PART_ESTIMATE_CHARS, requestChars } from './gateway-attempts';

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
function outgoingMessage(message: GatewayMessage): ChatCompletionMessageParam {
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

function finishReasonOf(value: unknown): GatewayAnswer['finishReason'] | undefined {
  return value === 'stop' || value === 'length' || value === 'tool_calls' ? value : undefined;
}

@Injectable()
export class OpenAiModelGateway {
  private readonly attempts: GatewayAttempts;

  constructor(@Inject(APP_CONFIG) config: AppConfig, usage: UsageService) {
    this.attempts = new GatewayAttempts(config, usage);
  }

  complete(call: GatewayCall): Promise<GatewayAnswer> {
    return this.attempts.run(call, (progress) => this.streamOnce(call, progress));
  }

  /** Streams one completion: text and reasoning are forwarded as they arrive; tool calls are accumulated. */
  private async streamOnce(call: GatewayCall, progress: { content: string }): Promise<AttemptAnswer> {
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
    let finishReason: GatewayAnswer['finishReason'];
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
    for await (const batch of completionChunkBatches(openAiClient(call.client), params, { signal: call.signal, maxRetries: 0 })) {
      let text = '';
      let thought = '';
      for (const chunk of batch) {
        // usage may come with the last choice, in a chunk of its own, in Groq's `x_groq`, or not at all
        const usage = chunk.usage ?? (chunk as { x_groq?: { usage?: ChatCompletionChunk['usage'] } }).x_groq?.usage;
        if (usage) reported = usage;
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
        // OpenAI's refusal comes in a field of its own, content null: it is what the model answers
        if (typeof delta['refusal'] === 'string') text += delta['refusal'];
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
    return {
      content: progress.content,
      toolCalls: calls,
      reported,
      ...(reasoning !== '' ? { reasoning } : {}),
      ...(replay ? { replay } : {}),
      ...(finishReason ? { finishReason } : {}),
    };
  }
}
