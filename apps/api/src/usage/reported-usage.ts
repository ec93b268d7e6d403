/**
 * The token usage a provider reports at the end of a call, as received (OpenAI-compatible `usage`), and the one place
 * that reads its prompt-cache count: the chat's `done.usage.cached_tokens` and the usage ledger both take it here.
 */

/** OpenAI-compatible `usage`; every field may be missing or null. */
export interface ReportedUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  /** OpenAI, Ollama's OpenAI-compatible API (from its `prompt_eval_cached_count`), vLLM, LiteLLM and most gateways */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  /** DeepSeek's name for the same count */
  prompt_cache_hit_tokens?: number | null;
  /**
   * prompt tokens written to the provider's prompt cache (Anthropic's `cache_creation_input_tokens`, which the
   * Anthropic gateway reports here with its other counts in this shape); part of `prompt_tokens`
   */
  cache_creation_input_tokens?: number | null;
}

/** A reported token count: a finite number >= 0, rounded; anything else is unknown (undefined). */
export const tokenCount = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;

/**
 * Prompt tokens the provider served from its prompt cache, or undefined when it does not say (unknown, not zero):
 * `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`.
 */
export function reportedCachedTokens(usage: ReportedUsage | null | undefined): number | undefined {
  if (!usage) return undefined;
  return tokenCount(usage.prompt_tokens_details?.cached_tokens) ?? tokenCount(usage.prompt_cache_hit_tokens);
}

/** Prompt tokens the provider wrote to its prompt cache, or undefined when it does not say. */
export function reportedCacheWriteTokens(usage: ReportedUsage | null | undefined): number | undefined {
  return usage ? tokenCount(usage.cache_creation_input_tokens) : undefined;
}
