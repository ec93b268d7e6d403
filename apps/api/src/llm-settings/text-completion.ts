/**
 * One short non-streaming completion for background work (chat titles, consolidation summaries, Dream phases, Skill
 * evolution), in the protocol of the lease's client: a system prompt and one user message in, the answer's text out.
 * A reasoning model's reasoning never comes back as text (openspec agent-runner "Requirement: Reasoning kept apart
 * from the answer"): a leading `<think>` block is dropped, reasoning fields and thinking blocks are ignored.
 */
import { isAnthropicClient, openAiClient, type ProviderClient } from './provider-client';
import { anthropicReportedUsage } from './anthropic-usage';
import { stripThinkBlock } from './reasoning-split';
import type { ReportedUsage } from '../usage/reported-usage';

/** The answer bound of an Anthropic call when the caller sets none (the API requires one). */
export const ANTHROPIC_BACKGROUND_MAX_TOKENS = 4096;

export interface TextCompletionRequest {
  model: string;
  system: string;
  user: string;
  /** bound of the answer; the provider's default when absent (Anthropic: ANTHROPIC_BACKGROUND_MAX_TOKENS) */
  maxTokens?: number;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface TextCompletion {
  text: string;
  usage: ReportedUsage | null;
}

/** Rejects with the SDK's error (classifyProviderError reads both SDKs' errors). */
export async function completeText(client: ProviderClient, request: TextCompletionRequest): Promise<TextCompletion> {
  const options = { signal: request.signal, maxRetries: 0, timeout: request.timeoutMs };
  if (isAnthropicClient(client)) {
    const message = await client.messages.create(
      {
        model: request.model,
        max_tokens: request.maxTokens ?? ANTHROPIC_BACKGROUND_MAX_TOKENS,
        system: request.system,
        messages: [{ role: 'user', content: request.user }],
      },
      options,
    );
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { text, usage: anthropicReportedUsage(message.usage) };
  }
  const response = await openAiClient(client).chat.completions.create(
    {
      model: request.model,
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: request.user },
      ],
      stream: false,
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    },
    options,
  );
  const content = response.choices[0]?.message?.content;
  return { text: stripThinkBlock(typeof content === 'string' ? content : ''), usage: response.usage ?? null };
}
