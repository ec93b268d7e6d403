/**
 * ChatDirectoryStore: which chats exist — a chat is a directory of the memory directory named by a valid chat id
 * (hidden entries and other names are not chats). Lists them (ids only, or with title and last update for the
 * sessions list), checks one, and deletes one on its lane: the directory goes, the process forgets the chat, and a
 * turn of that chat that finishes later writes nothing (chat-file-lanes.ts).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CHAT_ID_PATTERN, isErrorCode, sessionChannelInfo } from '@cashcode/contracts';
import { promises as fs, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { assertChatId, ChatFiles, HISTORY_FILE } from './chat-files';
import { ChatFileLanes } from './chat-file-lanes';
import { ChatMetadataStore, titleOf } from './chat-metadata.store';
import { HistoryWriter } from './history-writer';
import { MemoryError } from './memory.errors';
import type { StoredSessionSummary } from './memory.types';

/** parallel stat/read calls while listing sessions */
const LIST_CONCURRENCY = 16;

@Injectable()
export class ChatDirectoryStore {
  private readonly logger = new Logger(ChatDirectoryStore.name);
  private readonly files: ChatFiles;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>,
    private readonly lanes: ChatFileLanes,
    private readonly writer: HistoryWriter,
    private readonly metadata: ChatMetadataStore,
  ) {
    this.files = new ChatFiles(config.memoryDir);
  }

  async chatExists(chatId: string): Promise<boolean> {
    assertChatId(chatId);
    return this.files.isChatDirectory(chatId);
  }

  /** Ids of every chat directory (non-hidden, valid chat id), unsorted; reads only the directory listing. */
  async listChatIds(): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(this.files.memoryDir, { withFileTypes: true });
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return [];
      throw error;
    }
    return entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && CHAT_ID_PATTERN.test(entry.name))
      .map((entry) => entry.name);
  }

  /** Every chat directory (non-hidden, valid chat id) with its title and last update; unsorted. */
  async listSessions(): Promise<StoredSessionSummary[]> {
    const ids = await this.listChatIds();
    const out: StoredSessionSummary[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length) {
        const chatId = ids[next++]!;
        const summary = await this.summarize(chatId);
        if (summary) out.push(summary);
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, ids.length) }, worker));
    return out;
  }

  /**
   * Removes the chat directory and forgets the chat (cache, cursor state); a turn of that chat that finishes
   * later writes nothing. Throws `session_not_found` when the directory is missing.
   */
  async deleteChat(chatId: string): Promise<void> {
    assertChatId(chatId);
    await this.lanes.run(chatId, async () => {
      if (!(await this.files.isChatDirectory(chatId))) throw new MemoryError('session_not_found');
      await this.writer.forget(chatId);
      await fs.rm(this.files.chatDir(chatId), { recursive: true, force: true });
      this.lanes.forget(chatId);
      this.lanes.markDeleted(chatId);
      this.logger.log(`event=memory.chat.deleted chat_id=${chatId}`);
    });
  }

  /** The chat's title and last update (history.jsonl's mtime, else the directory's); null when it is gone. */
  private async summarize(chatId: string): Promise<StoredSessionSummary | null> {
    const dir = this.files.chatDir(chatId);
    let updatedAt: Date;
    try {
      updatedAt = (await fs.stat(join(dir, HISTORY_FILE))).mtime;
    } catch {
      try {
        updatedAt = (await fs.stat(dir)).mtime;
      } catch {
        return null; // removed meanwhile
      }
    }
    const metadata = await this.metadata.current(chatId);
    const channel = sessionChannelInfo(metadata['channel']);
    return { chatId, title: titleOf(metadata), updatedAt, ...(channel ? { channel } : {}) };
  }
}
