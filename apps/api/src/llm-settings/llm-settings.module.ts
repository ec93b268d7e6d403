import { Module } from '@nestjs/common';
import { LLM_CLIENT_PROVIDER } from './llm-provider';
import { LlmOriginGuard } from './llm-origin.guard';
import { LlmSettingsController } from './llm-settings.controller';
import { LlmSettingsStore } from './llm-settings-store';
import { LlmSettingsService } from './llm-settings.service';

/**
 * LLM settings (openspec llm-settings): the settings file, provider clients with generations and leases, model
 * discovery. Other modules depend on LlmSettingsService or on the LlmClientProvider port via LLM_CLIENT_PROVIDER.
 */
@Module({
  controllers: [LlmSettingsController],
  providers: [
    LlmSettingsStore,
    LlmSettingsService,
    LlmOriginGuard,
    { provide: LLM_CLIENT_PROVIDER, useExisting: LlmSettingsService },
  ],
  exports: [LlmSettingsService, LLM_CLIENT_PROVIDER],
})
export class LlmSettingsModule {}
