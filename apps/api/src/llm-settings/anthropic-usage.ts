/**
 * Anthropic's usage counts in the shape the rest of the server reads (usage/reported-usage.ts). Anthropic reports
 * `input_tokens` without the cached part: the prompt is `input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens`, of which the reads were served from the cache and the creations written to it (each
 * priced apart, openspec usage).
 */
import type { ReportedUsage } from '../usage/reported-usage';

/** Usage as the Messages API reports it (`message_start`, `message_delta`, a whole answer); fields may be missing. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0);

/** The reported usage of a call (null when nothing was reported). */
export function anthropicReportedUsage(usage: AnthropicUsage | null | undefined): ReportedUsage | null {
  if (!usage) return null;
  const read = count(usage.cache_read_input_tokens);
  const written = count(usage.cache_creation_input_tokens);
  const prompt = count(usage.input_tokens) + read + written;
  const completion = count(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read },
    cache_creation_input_tokens: written,
  };
}

/** Merges the counts of a stream: `message_delta` repeats or updates those of `message_start` (later wins). */
export function mergeAnthropicUsage(base: AnthropicUsage | null, update: AnthropicUsage | null | undefined): AnthropicUsage | null {
  if (!update) return base;
  const merged: AnthropicUsage = { ...(base ?? {}) };
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const value = update[key];
    if (typeof value === 'number') merged[key] = value;
  }
  return merged;
}
