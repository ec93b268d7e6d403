/** The model providers CashCode speaks to, and a model choice (a provider and one of its models). */

export type LlmProvider = 'openai_compatible' | 'ollama';
export const LLM_PROVIDERS: readonly LlmProvider[] = ['openai_compatible', 'ollama'];

export interface LlmSelection {
  provider: LlmProvider;
  model: string;
}
