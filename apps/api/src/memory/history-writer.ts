/**
 * HistoryWriter: the appends to a chat's history.jsonl (openspec memory). Each append is one write of complete lines
 * with consecutive cursors, on the chat's lane (chat-file-lanes.ts), durable when it resolves. Before the first append of
 * a process the file's torn tail is cut off and the next cursor found (the last record wins over the `.cursor` hint
 * when larger). The append handle of a recently written chat stays open (bounded), so a turn costs one write + one
 * fdatasync; the `.cursor` hint is written shortly after (coalesced per chat), on flush() and at shutdown.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { isErrorCode } from '@cashcode/contracts';
import { constants as fsConstants, promises as fs, writeSync } from 'node:fs';
import { mkdirPrivate, openPrivate, writeFilePrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ChatFiles, readerFor } from './chat-files';
import { ChatFileLanes } from './chat-file-lanes';
import { HistoryReader } from './history-reader';
import { recordToMessage, serializeHistoryRecord, type PendingRecord } from './history-record';
import { scanHistoryBackward } from './history-scan';
import { formatLocalMinute } from './local-time';
import { MEMORY_CLOCK, memoryClock, type MemoryClock } from './memory-clock';
import type { HistoryRecord } from './memory.types';

/**
 * history.jsonl is appended through O_DSYNC where the platform has it: each write returns once the data is on disk
 * (what write + fdatasync gives, in one system call instead of two); elsewhere the append is followed by datasync().
 */
const APPEND_IS_DSYNC = typeof fsConstants.O_DSYNC === 'number' && fsConstants.O_DSYNC !== 0;
const APPEND_FLAGS =
  fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | (APPEND_IS_DSYNC ? fsConstants.O_DSYNC : 0);

/** Called after records were appended to a chat's history.jsonl (the session index keeps itself current with it). */
export type AppendListener = (chatId: string, records: readonly HistoryRecord[]) => void;

/** How HistoryWriter.append treats the cached chat and the write. */
export interface AppendMode {
  /** extend the cached model context with the records (re-read it when they supersede earlier ones) */
  extendCache: boolean;
  /** write on the calling thread (see AppendOptions.inline in memory.types.ts) */
  inline: boolean;
}

interface WriterState {
  nextCursor: number;
}

/**
 * Writes every byte of `data` at the end of an O_APPEND file: one `write` system call for a turn (a regular file takes
 * it whole), looping only if the kernel accepts less. FileHandle.writeFile costs about twice as much per call.
 */
async function writeAll(handle: fs.FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    if (bytesWritten <= 0) throw new Error('history append wrote no bytes');
    offset += bytesWritten;
  }
}

/** writeAll on the calling thread (see AppendMode.inline). */
function writeAllInline(handle: fs.FileHandle, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    const bytesWritten = writeSync(handle.fd, data, offset, data.length - offset);
    if (bytesWritten <= 0) throw new Error('history append wrote no bytes');
    offset += bytesWritten;
  }
}

@Injectable()
export class HistoryWriter implements OnApplicationShutdown {
  private readonly logger = new Logger(HistoryWriter.name);
  private readonly files: ChatFiles;
  private readonly now: MemoryClock;
  private readonly writers = new Map<string, WriterState>();
  private readonly listeners = new Set<AppendListener>();
  /** open append handles of history.jsonl files, least recently used first */
  private readonly appendHandles = new Map<string, fs.FileHandle>();
  /** .cursor hints not written yet: chat → last cursor appended */
  private readonly cursorHintsDue = new Map<string, number>();
  private cursorHintTimer: NodeJS.Timeout | null = null;
  /** history.jsonl append handles kept open; the least recently used idle ones are closed beyond this */
  maxOpenAppendHandles = 64;
  /** how long after an append its .cursor hint is written (appends meanwhile are coalesced into one write) */
  cursorHintDelayMs = 500;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>,
    private readonly lanes: ChatFileLanes,
    private readonly reader: HistoryReader,
    @Optional() @Inject(MEMORY_CLOCK) clock?: MemoryClock,
  ) {
    this.files = new ChatFiles(config.memoryDir);
    this.now = memoryClock(clock);
  }

  /**
   * Appends the records on the chat's lane, giving them the next cursors and the current minute, and tells the append
   * listeners. Returns the records written: none when the chat was deleted while the caller ran (its turn finished
   * after the delete). The caller checked the chat id.
   */
  append(chatId: string, pending: PendingRecord[], mode: AppendMode): Promise<HistoryRecord[]> {
    return this.lanes.run(chatId, async () => {
      if (this.lanes.isDeleted(chatId)) {
        this.logger.warn(`event=memory.append.skipped chat_id=${chatId} reason=deleted records=${pending.length}`);
        return [];
      }
      const writer = await this.prepareWriter(chatId);
      const timestamp = formatLocalMinute(this.now());
      const records: HistoryRecord[] = pending.map((record, index) => ({
        cursor: writer.nextCursor + index,
        timestamp,
        ...record,
      }));
      const text = records.map((record) => `${serializeHistoryRecord(record)}\n`).join('');
      try {
        const handle = await this.appendHandle(chatId);
        const data = Buffer.from(text, 'utf8');
        if (mode.inline && APPEND_IS_DSYNC) writeAllInline(handle, data);
        else {
          await writeAll(handle, data);
          if (!APPEND_IS_DSYNC) await handle.datasync();
        }
      } catch (error) {
        // the file may now end with a partial line: inspect (and repair) it again before the next append
        this.writers.delete(chatId);
        await this.closeAppendHandle(chatId);
        throw error;
      }
      const lastCursor = records[records.length - 1]!.cursor;
      writer.nextCursor = lastCursor + 1;
      // the .cursor hint follows shortly, on the lane (the last record stays authoritative)
      this.scheduleCursorHint(chatId, lastCursor);
      const cached = this.lanes.cached(chatId);
      if (cached && mode.extendCache && typeof records[0]!.supersedes === 'number') {
        // records were replaced: the cached model context is the current branch again, as a reload would give it
        cached.history = (await this.reader.smartLoad(chatId)).messages;
      } else if (cached && mode.extendCache) {
        for (const record of records) {
          const message = recordToMessage(record);
          if (message) cached.history.push(message);
        }
      }
      this.notify(chatId, records);
      return records;
    });
  }

  /** Registers a listener told about every append (after it is on disk); returns the unsubscribe function. */
  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when every operation queued so far (on all chats, or on one) has finished, due .cursor hints included. */
  async flush(chatId?: string): Promise<void> {
    this.writeDueCursorHints(chatId);
    await this.lanes.settled(chatId);
    if (this.lanes.anyBusy(chatId)) await this.flush(chatId);
  }

  /**
   * Forgets the chat's writer state, its open append handle and its due .cursor hint (the chat directory is being
   * removed); called on the chat's lane.
   */
  async forget(chatId: string): Promise<void> {
    await this.closeAppendHandle(chatId);
    this.cursorHintsDue.delete(chatId);
    this.writers.delete(chatId);
  }

  /** Lets queued writes (e.g. the .cursor hint) finish before the process exits, then closes the append handles. */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    if (this.cursorHintTimer) clearTimeout(this.cursorHintTimer);
    this.cursorHintTimer = null;
    const handles = [...this.appendHandles.values()];
    this.appendHandles.clear();
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
  }

  private notify(chatId: string, records: readonly HistoryRecord[]): void {
    for (const listener of this.listeners) {
      try {
        listener(chatId, records);
      } catch (error) {
        this.logger.error(
          `event=memory.append.listener_failed chat_id=${chatId} error=${error instanceof Error ? error.name : 'unknown'}`,
        );
      }
    }
  }

  /** First append of this process: repair a torn tail and find the next cursor. */
  private async prepareWriter(chatId: string): Promise<WriterState> {
    const known = this.writers.get(chatId);
    if (known) return known;
    await mkdirPrivate(this.files.chatDir(chatId));
    let lastCursor = 0;
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(this.files.historyPath(chatId), 'r+');
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) throw error;
    }
    if (handle) {
      try {
        const { size } = await handle.stat();
        const tail = await scanHistoryBackward(readerFor(handle), size, { stopAtFirstRecord: true });
        if (tail.validSize < size) {
          await handle.truncate(tail.validSize);
          await handle.datasync();
          this.logger.warn(
            `event=memory.history.torn_tail chat_id=${chatId} dropped_bytes=${size - tail.validSize} action=truncated`,
          );
        }
        lastCursor = tail.lastCursor ?? 0;
      } finally {
        await handle.close();
      }
    }
    const hinted = await this.readCursorHint(chatId);
    const state: WriterState = { nextCursor: Math.max(lastCursor, hinted) + 1 };
    this.writers.set(chatId, state);
    return state;
  }

  /** The chat's open append handle (opened on first use; the least recently used idle handles are closed). */
  private async appendHandle(chatId: string): Promise<fs.FileHandle> {
    const known = this.appendHandles.get(chatId);
    if (known) {
      this.appendHandles.delete(chatId);
      this.appendHandles.set(chatId, known);
      return known;
    }
    const handle = await openPrivate(this.files.historyPath(chatId), APPEND_FLAGS);
    this.appendHandles.set(chatId, handle);
    if (this.appendHandles.size > this.maxOpenAppendHandles) {
      for (const [id, open] of this.appendHandles) {
        if (this.appendHandles.size <= this.maxOpenAppendHandles) break;
        // a chat with queued operations may be using its handle right now
        if (id === chatId || this.lanes.isBusy(id)) continue;
        this.appendHandles.delete(id);
        void open.close().catch(() => undefined);
      }
    }
    return handle;
  }

  private async closeAppendHandle(chatId: string): Promise<void> {
    const handle = this.appendHandles.get(chatId);
    if (!handle) return;
    this.appendHandles.delete(chatId);
    await handle.close().catch(() => undefined);
  }

  /** Remembers that the chat's .cursor hint is due; one timer writes every due hint (coalescing later appends). */
  private scheduleCursorHint(chatId: string, cursor: number): void {
    this.cursorHintsDue.set(chatId, cursor);
    if (this.cursorHintTimer) return;
    this.cursorHintTimer = setTimeout(() => {
      this.cursorHintTimer = null;
      this.writeDueCursorHints();
    }, this.cursorHintDelayMs);
    this.cursorHintTimer.unref();
  }

  /** Queues the due .cursor hints (of one chat, or all) on their chats' lanes. */
  private writeDueCursorHints(chatId?: string): void {
    const due = chatId === undefined ? [...this.cursorHintsDue] : [];
    if (chatId !== undefined) {
      const cursor = this.cursorHintsDue.get(chatId);
      if (cursor !== undefined) due.push([chatId, cursor]);
    }
    for (const [id, cursor] of due) {
      this.cursorHintsDue.delete(id);
      void this.lanes.run(id, () => this.writeCursorHint(id, cursor));
    }
  }

  private async writeCursorHint(chatId: string, cursor: number): Promise<void> {
    if (this.writers.get(chatId)?.nextCursor !== cursor + 1) return; // superseded or the chat was deleted
    try {
      await writeFilePrivate(this.files.cursorPath(chatId), String(cursor));
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return; // the chat directory is gone: nothing to hint
      this.logger.warn(`event=memory.cursor.write_failed chat_id=${chatId} error=${String((error as { code?: unknown }).code)}`);
    }
  }

  private async readCursorHint(chatId: string): Promise<number> {
    try {
      const text = (await fs.readFile(this.files.cursorPath(chatId), 'utf8')).trim();
      const value = /^\d+$/.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(value) ? value : 0;
    } catch {
      return 0;
    }
  }
}
