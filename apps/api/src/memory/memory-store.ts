/**
 * The chat store under its former name, for the callers that still import it (skills/): it is HistoryLogStore, which
 * has every method they use (getChat, saveMetadata). MemoryModule binds it to the same instance. New code injects the
 * store it needs (history-log.store.ts, chat-metadata.store.ts, chat-directory.store.ts, artifact.store.ts,
 * memory-documents.ts); this file goes once nothing imports it.
 */
import type { AppConfig } from '../config/app-config';
import { HistoryLogStore } from './history-log.store';
import type { MemoryClock } from './memory-clock';
import { createMemoryStores } from './memory-stores';

export class MemoryStore extends HistoryLogStore {
  /** a store of its own memory directory, outside Nest (unit specs) */
  constructor(config: Pick<AppConfig, 'memoryDir'>, clock?: MemoryClock) {
    const { lanes, reader, writer, metadata } = createMemoryStores(config, clock);
    super(lanes, reader, writer, metadata);
  }
}
