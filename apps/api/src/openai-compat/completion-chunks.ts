/**
 * The OpenAI wire objects the endpoint answers with: `chat.completion` (non-streaming), `chat.completion.chunk`
 * (streaming, each sent as `data: <json>\n\n`, then `data: [DONE]\n\n`) and `model` list entries. One completion id
 * and `created` time per request; with `stream_options.include_usage` every chunk carries `usage: null` and a last
 * chunk with empty `choices` carries the usage. The model's reasoning (a reasoning model's `reasoning_content` /
 * `reasoning`, a `<think>` block, Anthropic thinking) goes as `reasoning_content` — `delta.reasoning_content` in chunks,
 * `message.reasoning_content` in a completion — the field DeepSeek and vLLM use, never inside `content`.
 */
import { randomBytes } from 'node:crypto';
import type { TokenUsage } from '@cashcode/contracts';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';

export const SSE_DONE = 'data: [DONE]\n\n';

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export function newCompletionIdentity(model: string, now: Date = new Date()): CompletionIdentity {
  return { id: `chatcmpl-${randomBytes(12).toString('hex')}`, created: Math.floor(now.getTime() / 1000), model };
}

function usageOf(usage: TokenUsage): ChatCompletion['usage'] {
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens };
}

/** A completion message with the reasoning field of DeepSeek and vLLM (not in the OpenAI SDK's types). */
type MessageWithReasoning = ChatCompletion.Choice['message'] & { reasoning_content?: string };
/** A chunk delta with the reasoning field of DeepSeek and vLLM. */
type DeltaWithReasoning = ChatCompletionChunk.Choice['delta'] & { reasoning_content?: string };

export function completionObject(identity: CompletionIdentity, content: string, usage: TokenUsage, reasoning = ''): ChatCompletion {
  const message: MessageWithReasoning = { role: 'assistant', content, refusal: null };
  if (reasoning !== '') message.reasoning_content = reasoning;
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message, finish_reason: 'stop', logprobs: null }],
    usage: usageOf(usage),
  };
}

/** Builds the chunks of one streamed completion. */
export class ChunkWriter {
  constructor(
    private readonly identity: CompletionIdentity,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(choices: ChatCompletionChunk['choices']): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.identity.id,
      object: 'chat.completion.chunk',
      created: this.identity.created,
      model: this.identity.model,
      choices,
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  /** the first chunk: the assistant role with empty content */
  role(): ChatCompletionChunk {
    return this.chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }]);
  }

  content(text: string): ChatCompletionChunk {
    return this.chunk([{ index: 0, delta: { content: text }, finish_reason: null, logprobs: null }]);
  }

  /** a piece of the model's reasoning: `delta.reasoning_content` */
  reasoning(text: string): ChatCompletionChunk {
    const delta: DeltaWithReasoning = { reasoning_content: text };
    return this.chunk([{ index: 0, delta, finish_reason: null, logprobs: null }]);
  }

  finish(): ChatCompletionChunk {
    return this.chunk([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }]);
  }

  /** the usage chunk (only with include_usage): empty `choices` */
  usage(usage: TokenUsage): ChatCompletionChunk {
    return { ...this.chunk([]), usage: usageOf(usage) };
  }
}

/** One SSE event of a JSON payload. */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
