/**
 * ChatMetadataStore: a chat's metadata.json (openspec memory) — title, activated tools and Skills, selected MCP
 * connectors — written as pretty JSON, replaced atomically, on the chat's lane (chat-file-lanes.ts) so that it is ordered
 * with the chat's appends. A loaded chat's cached state holds the same object the file was written from.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isErrorCode, isRecord } from '@cashcode/contracts';
import { promises as fs } from 'node:fs';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { assertChatId, ChatFiles } from './chat-files';
import { ChatFileLanes } from './chat-file-lanes';
import { MemoryError } from './memory.errors';
import type { ChatMetadata } from './memory.types';

/**
 * additive metadata.json key: `auto` for the fallback title of the first message, `model` for a model-written one;
 * absent for a title the user set (a rename removes it) and for chats of the original server.
 */
export const TITLE_SOURCE_KEY = 'title_source';

/** metadata.json's text: pretty JSON ending with a newline */
function metadataText(metadata: ChatMetadata): string {
  return `${JSON.stringify(metadata, null, 2)}\n`;
}

/** The title of the metadata, or null when it has none (missing or blank). */
export function titleOf(metadata: ChatMetadata): string | null {
  return typeof metadata.title === 'string' && metadata.title.trim() !== '' ? metadata.title : null;
}

@Injectable()
export class ChatMetadataStore {
  private readonly logger = new Logger(ChatMetadataStore.name);
  private readonly files: ChatFiles;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>,
    private readonly lanes: ChatFileLanes,
  ) {
    this.files = new ChatFiles(config.memoryDir);
  }

  /**
   * The chat's metadata.json as stored: `{}` when missing, and (logged) when unreadable or not a JSON object
   * (openspec memory). Reads the file even when the chat is cached; the caller checked the chat id.
   */
  async read(chatId: string): Promise<ChatMetadata> {
    let text: string;
    try {
      text = await fs.readFile(this.files.metadataPath(chatId), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return {};
      this.logger.warn(`event=memory.metadata.unreadable chat_id=${chatId}`);
      return {};
    }
    try {
      const value: unknown = JSON.parse(text);
      if (isRecord(value)) return value as ChatMetadata;
    } catch {
      // fall through: unreadable metadata is treated as empty (openspec memory)
    }
    this.logger.warn(`event=memory.metadata.invalid chat_id=${chatId} action=ignored`);
    return {};
  }

  /** The cached metadata of a loaded chat, else the stored one. */
  async current(chatId: string): Promise<ChatMetadata> {
    const cached = this.lanes.cached(chatId);
    return cached ? cached.metadata : this.read(chatId);
  }

  /** Writes metadata.json (pretty, atomic), creating the chat directory; the cached state takes the same object. */
  async save(chatId: string, metadata: ChatMetadata): Promise<void> {
    assertChatId(chatId);
    const text = metadataText(metadata);
    await this.lanes.run(chatId, async () => {
      if (this.lanes.isDeleted(chatId)) {
        this.logger.warn(`event=memory.metadata.skipped chat_id=${chatId} reason=deleted`);
        return;
      }
      await mkdirPrivate(this.files.chatDir(chatId));
      await writeFileAtomic(this.files.metadataPath(chatId), text);
      const cached = this.lanes.cached(chatId);
      if (cached && cached.metadata !== metadata) cached.metadata = metadata;
    });
  }

  /** The chat's title from its (cached or stored) metadata; null when it has none. */
  async chatTitle(chatId: string): Promise<string | null> {
    assertChatId(chatId);
    return titleOf(await this.current(chatId));
  }

  /** Renames a chat on disk and in the cache; throws `session_not_found` when the directory is missing. */
  async renameChat(chatId: string, title: string): Promise<string> {
    assertChatId(chatId);
    return this.lanes.run(chatId, async () => {
      if (!(await this.files.isChatDirectory(chatId))) throw new MemoryError('session_not_found');
      const metadata = await this.current(chatId);
      metadata.title = title;
      // a title the user chose is never replaced by a model-written one
      delete metadata[TITLE_SOURCE_KEY];
      await writeFileAtomic(this.files.metadataPath(chatId), metadataText(metadata));
      return title;
    });
  }

  /**
   * Replaces the automatic title `expected` (metadata `title_source: "auto"`; `''`: no title yet) with `title`, on the
   * chat's lane; does nothing after a rename or any other title change. Resolves with whether it was replaced.
   */
  async replaceAutomaticTitle(chatId: string, expected: string, title: string): Promise<boolean> {
    assertChatId(chatId);
    return this.lanes.run(chatId, async () => {
      if (this.lanes.isDeleted(chatId) || !(await this.files.isChatDirectory(chatId))) return false;
      const metadata = await this.current(chatId);
      const current = typeof metadata.title === 'string' ? metadata.title : '';
      const automatic = expected === '' ? current === '' : metadata[TITLE_SOURCE_KEY] === 'auto' && current === expected;
      if (!automatic) return false;
      metadata.title = title;
      metadata[TITLE_SOURCE_KEY] = 'model';
      await writeFileAtomic(this.files.metadataPath(chatId), metadataText(metadata));
      return true;
    });
  }
}
