/**
 * ModelGateway: how the agent loop reaches a model (openspec agent-runner). One call streams one completion and
 * reports its text (and its reasoning, apart) as it arrives; the gateway owns everything between the loop and the
 * provider — the wire protocol, retries with backoff, and the usage ledger's reserve (spend limits, checked before
 * every attempt) and settle.
 *
 * The loop speaks one neutral conversation format, the OpenAI chat format (`WireMessage`); a gateway translates it to
 * its provider's protocol. Implemented by `llm-settings/openai-model-gateway.ts` (the OpenAI chat-completions
 * protocol, which also serves Ollama and every OpenAI-compatible server) and `llm-settings/anthropic-model-gateway.ts`
 * (Anthropic's Messages API); `llm-settings/model-gateway-router.ts` picks one per provider and is what MODEL_GATEWAY
 * is bound to, so the loop never branches on a provider.
 */
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmProvider, Money, TokenUsage } from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import type { ProviderClient } from '../llm-settings/provider-client';
import type { ToolCallRecord } from '../memory/memory.types';

/** Injection token of the ModelGateway (bound in AgentModule). */
export const MODEL_GATEWAY = Symbol('ModelGateway');

/**
 * A message of the conversation as the loop keeps it. `replay` rides on an assistant message of the running turn's
 * tool loop only: what its gateway returned in `ModelAnswer.replay` (Anthropic thinking blocks with their signatures,
 * a reasoning field the provider wants back), for the same gateway to send back as its API requires. It is never
 * persisted, so later turns never send reasoning back.
 */
export type WireMessage = ChatCompletionMessageParam & { replay?: unknown };

export interface ModelCall {
  /** the provider's SDK client (from the turn's lease) */
  client: ProviderClient;
  provider: LlmProvider;
  model: string;
  /** the conversation as the model gets it */
  messages: readonly WireMessage[];
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
  /** each piece of reasoning as it arrives, never part of the answer text */
  onReasoning?(text: string): void;
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
  /** the call's reasoning text (absent: none) */
  reasoning?: string;
  /** what the loop hands back on this answer's assistant message within the turn (see WireMessage) */
  replay?: unknown;
  /**
   * why the model stopped: `length` when it hit its output limit (`max_tokens`; the answer is cut and a `continue`
   * carries on), else `stop` / `tool_calls` (absent: the provider did not say)
   */
  finishReason?: 'stop' | 'length' | 'tool_calls';
}

export interface ModelGateway {
  /**
   * One completion. Rejects with ModelCallError when the model fails for good (not retryable, retries used up, a
   * Retry-After too long, or the stream broke after text was delivered), with SpendLimitError when a limit refuses the
   * call, and with any error once `signal` aborted (the loop then reports the cancel).
   */
  complete(call: ModelCall): Promise<ModelAnswer>;
}
