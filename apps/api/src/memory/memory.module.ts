import { Module } from '@nestjs/common';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { BackgroundModel } from './background-model';
import { Consolidator } from './consolidator';
import { DreamScheduler } from './dream.scheduler';
import { DreamService } from './dream.service';
import { DreamStore } from './dream-store';
import { MemoryController } from './memory.controller';
import { MemoryService } from './memory.service';
import { MemoryStore } from './memory-store';
import { SessionIndex } from './session-index';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

/**
 * Chat memory (history.jsonl, metadata.json, SOUL.md, MEMORY.md), the sessions REST API, consolidation after each
 * turn, Dream (scheduled long-term memory distillation with review and undo), the memory REST API and the session
 * search index. Needs the global APP_CONFIG, EventEmitter2 (EventEmitterModule.forRoot) and SchedulerRegistry
 * (ScheduleModule.forRoot) of the root module.
 */
@Module({
  imports: [LlmSettingsModule],
  controllers: [SessionsController, MemoryController],
  providers: [
    MemoryStore,
    SessionsService,
    BackgroundModel,
    Consolidator,
    DreamStore,
    DreamService,
    DreamScheduler,
    MemoryService,
    SessionIndex,
  ],
  exports: [MemoryStore, SessionIndex, BackgroundModel],
})
export class MemoryModule {}
