import { Module } from '@nestjs/common';
import { LLM_CLIENT_PROVIDER } from './llm-provider';
import { LlmOriginGuard } from './llm-origin.guard';
import { LlmSettingsController } from './llm-settings.controller';
import { LlmSettingsStore } from './llm-settings-store';
import { LlmSettingsService } from './llm-settings.service';
import { OpenAiModelGateway } from './openai-model-gateway';

/**
 * LLM settings (openspec llm-settings): the settings file, provider clients with generations and leases, model
 * discovery, and the model gateway of the OpenAI chat protocol (the agent binds it as its ModelGateway). Other modules
 * depend on LlmSettingsService or on the LlmClientProvider port via LLM_CLIENT_PROVIDER.
 */
@Module({
  controllers: [LlmSettingsController],
  providers: [
    LlmSettingsStore,
    LlmSettingsService,
    LlmOriginGuard,
    OpenAiModelGateway,
    { provide: LLM_CLIENT_PROVIDER, useExisting: LlmSettingsService },
  ],
  exports: [LlmSettingsService, LLM_CLIENT_PROVIDER, OpenAiModelGateway],
})
export class LlmSettingsModule {}
