/**
 * Where a chat's files live in the memory directory (ARCHITECTURE.md "On-disk layout") and the small checks every
 * memory store makes before touching them:
 *   <MEMORY_DIR>/<chat_id>/history.jsonl   append-only ledger, one JSON record per line (history-log.store.ts)
 *   <MEMORY_DIR>/<chat_id>/.cursor         last cursor written, a hint (history-writer.ts)
 *   <MEMORY_DIR>/<chat_id>/metadata.json   pretty JSON, replaced atomically (chat-metadata.store.ts)
 *   <MEMORY_DIR>/<chat_id>/artifacts/      large tool results kept whole (artifact.store.ts)
 *   <MEMORY_DIR>/SOUL.md, MEMORY.md        persona and global long-term memory (memory-documents.ts)
 */
import { CHAT_ID_PATTERN, isErrorCode } from '@cashcode/contracts';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { ReadAt } from './history-scan';
import { MemoryError } from './memory.errors';

export const HISTORY_FILE = 'history.jsonl';
export const CURSOR_FILE = '.cursor';
export const METADATA_FILE = 'metadata.json';
/** where large tool results are kept, inside a chat's directory */
export const ARTIFACTS_DIR = 'artifacts';

/** Throws `invalid_chat_id` (400) unless the id may become a directory name. */
export function assertChatId(chatId: string): void {
  if (typeof chatId !== 'string' || !CHAT_ID_PATTERN.test(chatId)) throw new MemoryError('invalid_chat_id');
}

/** The paths of one memory directory. */
export class ChatFiles {
  constructor(readonly memoryDir: string) {}

  chatDir(chatId: string): string {
    return join(this.memoryDir, chatId);
  }

  historyPath(chatId: string): string {
    return join(this.memoryDir, chatId, HISTORY_FILE);
  }

  cursorPath(chatId: string): string {
    return join(this.memoryDir, chatId, CURSOR_FILE);
  }

  metadataPath(chatId: string): string {
    return join(this.memoryDir, chatId, METADATA_FILE);
  }

  artifactsDir(chatId: string): string {
    return join(this.memoryDir, chatId, ARTIFACTS_DIR);
  }

  /** Whether the chat's directory exists (a file or a symlink in its place is no chat). */
  async isChatDirectory(chatId: string): Promise<boolean> {
    try {
      return (await fs.lstat(this.chatDir(chatId))).isDirectory();
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return false;
      throw error;
    }
  }
}

/** Positional reads of an open file, filling the buffer unless the file ends first (the history scanners use it). */
export function readerFor(handle: fs.FileHandle): ReadAt {
  return async (buffer, position) => {
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, position + offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return offset;
  };
}
