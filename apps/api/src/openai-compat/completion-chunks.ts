/**
 * The OpenAI wire objects the endpoint answers with: `chat.completion` (non-streaming), `chat.completion.chunk`
 * (streaming, each sent as `data: <json>\n\n`, then `data: [DONE]\n\n`) and `model` list entries. One completion id
 * and `created` time per request; with `stream_options.include_usage` every chunk carries `usage: null` and a last
 * chunk with empty `choices` carries the usage.
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

export function completionObject(identity: CompletionIdentity, content: string, usage: TokenUsage): ChatCompletion {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
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
