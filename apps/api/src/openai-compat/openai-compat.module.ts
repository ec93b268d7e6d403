import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ChatModule } from '../chat/chat.module';
import { LlmOriginGuard } from '../llm-settings/llm-origin.guard';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { MemoryModule } from '../memory/memory.module';
import { SkillsModule } from '../skills/skills.module';
import { OpenAiCompatController } from './openai-compat.controller';
import { OpenAiCompatModels } from './openai-compat-models';
import { OpenAiCompatService } from './openai-compat.service';
import { OpenAiCompatSettingsController } from './openai-compat-settings.controller';
import { OpenAiCompatSettingsService } from './openai-compat-settings.service';

/**
 * The OpenAI-compatible endpoint (openspec openai-compat): `/v1/models` and `/v1/chat/completions` in the OpenAI
 * format, backed by the agent; its settings and keys under `/api/settings/openai-compat`. The `/v1` edge (switch,
 * bearer keys, CORS) is installed by bootstrap from OpenAiCompatSettingsService.
 */
@Module({
  imports: [AgentModule, ChatModule, LlmSettingsModule, MemoryModule, SkillsModule],
  controllers: [OpenAiCompatController, OpenAiCompatSettingsController],
  providers: [OpenAiCompatService, OpenAiCompatModels, OpenAiCompatSettingsService, LlmOriginGuard],
  exports: [OpenAiCompatSettingsService],
})
export class OpenAiCompatModule {}
