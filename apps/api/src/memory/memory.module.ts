import { Module } from '@nestjs/common';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { ArtifactStore } from './artifact.store';
import { BackgroundModel } from './background-model';
import { ChatDirectoryStore } from './chat-directory.store';
import { ChatFileLanes } from './chat-file-lanes';
import { ChatMetadataStore } from './chat-metadata.store';
import { Consolidator } from './consolidator';
import { DreamScheduler } from './dream.scheduler';
import { DreamService } from './dream.service';
import { DreamReview } from './dream-review.service';
import { DreamStore } from './dream-store';
import { HistoryLogStore } from './history-log.store';
import { HistoryReader } from './history-reader';
import { HistoryWriter } from './history-writer';
import { MemoryController } from './memory.controller';
import { MemoryDocuments } from './memory-documents';
import { MemoryService } from './memory.service';
import { SessionIndex } from './session-index';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

/** The stores of the memory directory (the only code that touches it); one ChatFileLanes serialises each chat's files. */
const MEMORY_STORES = [
  ChatFileLanes,
  HistoryReader,
  HistoryWriter,
  HistoryLogStore,
  ChatMetadataStore,
  ChatDirectoryStore,
  ArtifactStore,
  MemoryDocuments,
];

/**
 * Chat memory (history.jsonl, metadata.json, artifacts, SOUL.md, MEMORY.md), the sessions REST API, consolidation after
 * each turn, Dream (scheduled long-term memory distillation with review and undo), the memory REST API and the session
 * search index. Needs the global APP_CONFIG, EventEmitter2 (EventEmitterModule.forRoot) and SchedulerRegistry
 * (ScheduleModule.forRoot) of the root module.
 */
@Module({
  imports: [LlmSettingsModule],
  controllers: [SessionsController, MemoryController],
  providers: [
    ...MEMORY_STORES,
    // the former name of HistoryLogStore, for the callers not moved yet (memory-store.ts)
    SessionsService,
    BackgroundModel,
    Consolidator,
    DreamStore,
    DreamService,
    DreamReview,
    DreamScheduler,
    MemoryService,
    SessionIndex,
  ],
  exports: [
    HistoryReader,
    HistoryWriter,
    HistoryLogStore,
    ChatMetadataStore,
    ChatDirectoryStore,
    ArtifactStore,
    MemoryDocuments,
    SessionIndex,
    BackgroundModel,
  ],
})
export class MemoryModule {}
