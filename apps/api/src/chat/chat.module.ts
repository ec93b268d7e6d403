import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { McpModule } from '../mcp/mcp.module';
import { MemoryModule } from '../memory/memory.module';
import { SkillsModule } from '../skills/skills.module';
import { ChatGateway } from './chat.gateway';
import { ChatService } from './chat.service';
import { ChatTitleService } from './chat-title';
import { FirstTurnWarmup } from './first-turn-warmup';
import { TurnPersistence } from './turn-persistence';
import { TurnPipeline } from './turn-pipeline';

/**
 * The WebSocket chat and turn orchestration (openspec chat): ChatGateway (transport), ChatService (the entry point:
 * submit, cancel, events; per-chat lanes in chat-lanes.ts), TurnPipeline (one turn) and TurnPersistence (what a turn
 * writes). Needs the global EventEmitter2 (EventEmitterModule.forRoot in the root module).
 */
@Module({
  imports: [AgentModule, AttachmentsModule, MemoryModule, LlmSettingsModule, McpModule, SkillsModule],
  providers: [ChatService, TurnPipeline, TurnPersistence, ChatGateway, ChatTitleService, FirstTurnWarmup],
  exports: [ChatService, ChatGateway],
})
export class ChatModule {}
