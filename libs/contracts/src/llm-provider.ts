/** The model providers CashCode speaks to, and a model choice (a provider and one of its models). */

export type LlmProvider = 'openai_compatible' | 'ollama' | 'anthropic';
/** additive: `anthropic` (Anthropic's Messages API, spoken natively) */
export const LLM_PROVIDERS: readonly LlmProvider[] = ['openai_compatible', 'ollama', 'anthropic'];

export interface LlmSelection {
  provider: LlmProvider;
  model: string;
}
