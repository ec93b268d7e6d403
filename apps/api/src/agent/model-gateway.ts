/**
 * ModelGateway: how the agent loop reaches a model (openspec agent-runner). One call streams one completion and
 * reports its text as it arrives; the gateway owns everything between the loop and the provider — the wire protocol,
 * retries with backoff, and the usage ledger's reserve (spend limits, checked before every attempt) and settle.
 *
 * Implemented by `llm-settings/openai-model-gateway.ts` (the OpenAI chat-completions protocol, which also serves
 * Ollama and every OpenAI-compatible server); a provider with another wire protocol is another implementation bound to
 * MODEL_GATEWAY, not a branch in the loop.
 */
import type OpenAI from 'openai';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmProvider, Money, TokenUsage } from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import type { ToolCallRecord } from '../memory/memory.types';

/** Injection token of the ModelGateway (bound in AgentModule). */
export const MODEL_GATEWAY = Symbol('ModelGateway');

export interface ModelCall {
  client: OpenAI;
  provider: LlmProvider;
  model: string;
  /** the conversation as the model gets it */
  messages: readonly ChatCompletionMessageParam[];
  /** the tool schemas the model may call (none: answer in text) */
  tools: readonly ChatCompletionFunctionTool[];
  temperature?: number;
  maxTokens?: number;
  /** what the call is recorded as in the usage ledger: a chat turn, or a stateless `/v1` request */
  purpose: 'chat' | 'api';
  chatId: string;
  /** the loop's iteration (log lines) */
  iteration: number;
  ids: LogIds;
  signal: AbortSignal;
  /** each piece of answer text as it arrives (one network read's worth at a time) */
  onDelta(text: string): void;
  /**
   * the ledger settled an attempt (answered, failed or cancelled): its cost, or null when the model has no price;
   * called once per attempt, before `complete` resolves or rejects
   */
  onSettled(cost: Money | null): void;
}

export interface ModelAnswer {
  content: string;
  /** tool calls in the model's order; an id may be empty or reused (the loop makes them unique) */
  toolCalls: ToolCallRecord[];
  /** the tokens the provider reported for this call (null: nothing reported) */
  usage: TokenUsage | null;
}

export interface ModelGateway {
  /**
   * One completion. Rejects with ModelCallError when the model fails for good (not retryable, retries used up, a
   * Retry-After too long, or the stream broke after text was delivered), with SpendLimitError when a limit refuses the
   * call, and with any error once `signal` aborted (the loop then reports the cancel).
   */
  complete(call: ModelCall): Promise<ModelAnswer>;
}
