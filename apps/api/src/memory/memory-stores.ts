/**
 * The memory stores wired by hand, exactly as MemoryModule wires them, for code that runs them outside Nest (unit
 * specs): one ChatFileLanes shared by every per-chat store of one memory directory.
 */
import type { AppConfig } from '../config/app-config';
import { ArtifactStore } from './artifact.store';
import { ChatDirectoryStore } from './chat-directory.store';
import { ChatFileLanes } from './chat-file-lanes';
import { ChatMetadataStore } from './chat-metadata.store';
import { HistoryLogStore } from './history-log.store';
import { HistoryReader } from './history-reader';
import { HistoryWriter } from './history-writer';
import type { MemoryClock } from './memory-clock';
import { MemoryDocuments } from './memory-documents';

export interface MemoryStores {
  lanes: ChatFileLanes;
  reader: HistoryReader;
  writer: HistoryWriter;
  metadata: ChatMetadataStore;
  history: HistoryLogStore;
  chats: ChatDirectoryStore;
  artifacts: ArtifactStore;
  documents: MemoryDocuments;
  /** what the application shutdown does: lets queued writes finish and closes the open history files */
  shutdown(): Promise<void>;
}

export function createMemoryStores(config: Pick<AppConfig, 'memoryDir'>, clock?: MemoryClock): MemoryStores {
  const lanes = new ChatFileLanes();
  const reader = new HistoryReader(config);
  const writer = new HistoryWriter(config, lanes, reader, clock);
  const metadata = new ChatMetadataStore(config, lanes);
  const documents = new MemoryDocuments(config, clock);
  return {
    lanes,
    reader,
    writer,
    metadata,
    history: new HistoryLogStore(lanes, reader, writer, metadata),
    chats: new ChatDirectoryStore(config, lanes, writer, metadata),
    artifacts: new ArtifactStore(config, lanes),
    documents,
    shutdown: async () => {
      await Promise.all([writer.onApplicationShutdown(), documents.onApplicationShutdown()]);
    },
  };
}
