/**
 * The ModelGateway the agent is bound to (agent/agent.module.ts): each call goes to the gateway of its client's
 * protocol, Anthropic's Messages API or the OpenAI chat-completions protocol (OpenAI-compatible servers and Ollama).
 * The agent loop never branches on a provider.
 */
import { Injectable } from '@nestjs/common';
import { AnthropicModelGateway } from './anthropic-model-gateway';
import type { GatewayAnswer, GatewayCall } from './gateway-attempts';
import { OpenAiModelGateway } from './openai-model-gateway';
import { isAnthropicClient } from './provider-client';

@Injectable()
export class ModelGatewayRouter {
  constructor(
    private readonly openai: OpenAiModelGateway,
    private readonly anthropic: AnthropicModelGateway,
  ) {}

  complete(call: GatewayCall): Promise<GatewayAnswer> {
    return isAnthropicClient(call.client) ? this.anthropic.complete(call) : this.openai.complete(call);
  }
}
