import { Module, type DynamicModule } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { AgentModule } from './agent/agent.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { AttachmentsModule } from './attachments/attachments.module';
import { AutomationsModule } from './automations/automations.module';
import { BackupModule } from './backup/backup.module';
import { BrowserToolModule } from './agent/browser/browser-tool.module';
import { ChannelsModule } from './channels/channels.module';
import { ChannelDeliveryModule } from './channels/channel-delivery.module';
import { ChatModule } from './chat/chat.module';
import { CommonModule } from './common/common.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { EventsModule } from './events/event-bus';
import { EvolutionModule } from './evolution/evolution.module';
import { HealthModule } from './health/health.module';
import { LlmSettingsModule } from './llm-settings/llm-settings.module';
import { McpModule } from './mcp/mcp.module';
import { MemoryModule } from './memory/memory.module';
import { MetricsModule } from './metrics/metrics.module';
import { OpenAiCompatModule } from './openai-compat/openai-compat.module';
import { SkillsModule } from './skills/skills.module';
import { SubagentsModule } from './agent/subagents/subagents.module';
import { UsageModule } from './usage/usage.module';

/** Root module; built with the boot-validated configuration (main.ts, or a test with its own temp dirs). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        CommonModule,
        EventEmitterModule.forRoot(),
        EventsModule,
        ScheduleModule.forRoot(),
        UsageModule,
        HealthModule,
        LlmSettingsModule,
        MemoryModule,
        AgentModule,
        BrowserToolModule,
        SubagentsModule,
        ApprovalsModule,
        ChatModule,
        AttachmentsModule,
        McpModule,
        SkillsModule,
        EvolutionModule,
        OpenAiCompatModule,
        MetricsModule,
        BackupModule,
        AutomationsModule,
        ChannelsModule,
        ChannelDeliveryModule,
      ],
    };
  }
}
