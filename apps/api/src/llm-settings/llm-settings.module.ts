import { Module } from '@nestjs/common';
import { LLM_CLIENT_PROVIDER } from './llm-provider';
import { LlmOriginGuard } from './llm-origin.guard';
import { LlmSettingsController } from './llm-settings.controller';
import { LlmSettingsStore } from './llm-settings-store';
import { LlmSettingsService } from './llm-settings.service';
import { AnthropicModelGateway } from './anthropic-model-gateway';
import { ModelGatewayRouter } from './model-gateway-router';
import { OpenAiModelGateway } from './openai-model-gateway';

/**
 * LLM settings (openspec llm-settings): the settings file, provider clients with generations and leases, model
 * discovery, and the model gateways: the OpenAI chat protocol's and Anthropic's, behind the router the agent binds as
 * its ModelGateway. Other modules
 * depend on LlmSettingsService or on the LlmClientProvider port via LLM_CLIENT_PROVIDER.
 */
@Module({
  controllers: [LlmSettingsController],
  providers: [
    LlmSettingsStore,
    LlmSettingsService,
    LlmOriginGuard,
    OpenAiModelGateway,
    AnthropicModelGateway,
    ModelGatewayRouter,
    { provide: LLM_CLIENT_PROVIDER, useExisting: LlmSettingsService },
  ],
  exports: [LlmSettingsService, LLM_CLIENT_PROVIDER, OpenAiModelGateway, ModelGatewayRouter],
})
export class LlmSettingsModule {}
