/**
 * HistoryReader: every read of a chat's history.jsonl. A smart load reads from the end of the file back to the last
 * summary (O(kept tail), what a turn's model context is built from); the other reads serve the sessions API, Dream and
 * the session index. Readers drop a torn last line and skip malformed lines, logging both (openspec memory).
 *
 * The reads take no lane: a read of the whole file may see a concurrent append or not, never half of it (appends are
 * whole lines). Reads that must not interleave with an append run on the chat's lane in HistoryLogStore.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isErrorCode } from '@cashcode/contracts';
import { promises as fs, statSync } from 'node:fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { assertChatId, ChatFiles, readerFor } from './chat-files';
import { parseHistoryLine } from './history-record';
import { parseHistoryBuffer, scanHistoryBackward, type LinePosition, type SmartLoadResult } from './history-scan';
import type { HistoryRecord } from './memory.types';

/** malformed-line offsets logged per load, at most */
const MAX_LOGGED_OFFSETS = 10;

/** Size and mtime (ms) of a history.jsonl. */
export interface HistoryFileStat {
  size: number;
  mtimeMs: number;
}

/** the smart load of a chat without a history file */
function emptyLoad(): SmartLoadResult {
  return { messages: [], records: [], summary: null, lastCursor: null, validSize: 0, size: 0, malformedOffsets: [], bytesRead: 0 };
}

@Injectable()
export class HistoryReader {
  private readonly logger = new Logger(HistoryReader.name);
  private readonly files: ChatFiles;
  /** bytes read per step when loading a history from its end */
  chunkBytes = 64 * 1024;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>) {
    this.files = new ChatFiles(config.memoryDir);
  }

  /**
   * The smart load of a chat (openspec memory): the last summary and the records it keeps, as records and as model
   * messages, read from the end of the file. An unknown chat is an empty history. The caller checked the chat id.
   */
  async smartLoad(chatId: string): Promise<SmartLoadResult> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.files.historyPath(chatId), 'r');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return emptyLoad();
      throw error;
    }
    try {
      const { size } = await handle.stat();
      const result = await scanHistoryBackward(readerFor(handle), size, { chunkBytes: this.chunkBytes });
      this.reportMalformed(chatId, result.malformedOffsets);
      if (result.validSize < size) {
        this.logger.warn(
          `event=memory.history.torn_tail chat_id=${chatId} dropped_bytes=${size - result.validSize} action=dropped`,
        );
      }
      this.logger.debug(
        `event=memory.chat.loaded chat_id=${chatId} size=${size} bytes_read=${result.bytesRead} ` +
          `messages=${result.messages.length} consolidated=${result.summary !== null}`,
      );
      return result;
    } finally {
      await handle.close();
    }
  }

  /** Every valid record of the chat in file order (torn tail dropped, malformed lines skipped and logged). */
  async readRecords(chatId: string): Promise<HistoryRecord[]> {
    return (await this.readRecordsWithPositions(chatId)).records;
  }

  /** readRecords with the position of each record's line in history.jsonl (the session index keeps them). */
  async readRecordsWithPositions(chatId: string): Promise<{ records: HistoryRecord[]; positions: LinePosition[] }> {
    assertChatId(chatId);
    let data: Buffer;
    try {
      data = await fs.readFile(this.files.historyPath(chatId));
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return { records: [], positions: [] };
      throw error;
    }
    const parsed = parseHistoryBuffer(data);
    this.reportMalformed(chatId, parsed.malformedOffsets);
    return { records: parsed.records, positions: parsed.positions };
  }

  /**
   * The records on the given lines of the chat's history.jsonl (null for a line that is not a record any more, or
   * beyond the end of the file): what session search cuts its snippets from.
   */
  async readRecordsAt(chatId: string, positions: readonly LinePosition[]): Promise<Array<HistoryRecord | null>> {
    assertChatId(chatId);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.files.historyPath(chatId), 'r');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return positions.map(() => null);
      throw error;
    }
    try {
      const readAt = readerFor(handle);
      const records: Array<HistoryRecord | null> = [];
      for (const { offset, length } of positions) {
        const buffer = Buffer.allocUnsafe(length);
        const read = await readAt(buffer, offset);
        records.push(read === length ? parseHistoryLine(buffer.toString('utf8')) : null);
      }
      return records;
    } finally {
      await handle.close();
    }
  }

  /** Cursor of the chat's last valid record (0 when it has none), reading only the tail of the file. */
  async lastCursor(chatId: string): Promise<number> {
    assertChatId(chatId);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.files.historyPath(chatId), 'r');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return 0;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      const tail = await scanHistoryBackward(readerFor(handle), size, { stopAtFirstRecord: true });
      return tail.lastCursor ?? 0;
    } finally {
      await handle.close();
    }
  }

  /**
   * Size and mtime of the chat's history.jsonl (null when there is none), from one `stat`: the session index compares
   * them with what it recorded to know whether the chat is indexed, without reading the history.
   */
  async historyFileState(chatId: string): Promise<HistoryFileStat | null> {
    assertChatId(chatId);
    try {
      const { size, mtimeMs } = await fs.stat(this.files.historyPath(chatId));
      return { size, mtimeMs };
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return null;
      throw error;
    }
  }

  /**
   * historyFileState on the calling thread, for the append listener: the stat of a local file costs microseconds,
   * less than the thread-pool round trip of an asynchronous one.
   */
  historyFileStateSync(chatId: string): HistoryFileStat | null {
    assertChatId(chatId);
    try {
      const { size, mtimeMs } = statSync(this.files.historyPath(chatId));
      return { size, mtimeMs };
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return null;
      throw error;
    }
  }

  private reportMalformed(chatId: string, offsets: number[]): void {
    if (offsets.length === 0) return;
    const shown = offsets.slice(0, MAX_LOGGED_OFFSETS).join(',');
    this.logger.warn(
      `event=memory.history.malformed_line chat_id=${chatId} count=${offsets.length} offsets=${shown} action=skipped`,
    );
  }
}
