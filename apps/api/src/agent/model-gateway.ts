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
import type { GatewayAnswer, GatewayCall, GatewayMessage } from '../llm-settings/gateway-attempts';

/** Injection token of the ModelGateway (bound in AgentModule). */
export const MODEL_GATEWAY = Symbol('ModelGateway');

/**
 * The shapes of one call and its answer. They are declared once, next to the attempt loop every gateway shares
 * (llm-settings/gateway-attempts.ts, which sits below the agent and so cannot import this file): a message may carry
 * `replay`, what the loop hands back on an assistant message within the turn (e.g. Anthropic's signed thinking).
 */
export type WireMessage = GatewayMessage;
export type ModelCall = GatewayCall;
export type ModelAnswer = GatewayAnswer;

export interface ModelGateway {
  /**
   * One completion. Rejects with ModelCallError when the model fails for good (not retryable, retries used up, a
   * Retry-After too long, or the stream broke after text was delivered), with SpendLimitError when a limit refuses the
   * call, and with any error once `signal` aborted (the loop then reports the cancel).
   */
  complete(call: ModelCall): Promise<ModelAnswer>;
}
