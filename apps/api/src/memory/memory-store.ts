/**
 * The only code that touches the memory directory (ARCHITECTURE.md "On-disk layout"):
 *   <MEMORY_DIR>/<chat_id>/history.jsonl   append-only ledger, one JSON record per line (openspec memory)
 *   <MEMORY_DIR>/<chat_id>/.cursor         last cursor written (a hint; the last record wins when larger), written
 *                                          shortly after the appends (coalesced per chat), on flush() and at shutdown
 *   <MEMORY_DIR>/<chat_id>/metadata.json   pretty JSON, replaced atomically (openspec memory)
 *   <MEMORY_DIR>/SOUL.md, MEMORY.md        persona and global long-term memory (openspec memory)
 *
 * Every operation on one chat runs on that chat's lane (a promise chain): one writer per chat, and a load never
 * interleaves with an append. Chats are cached per process once loaded (smart load, O(kept tail)). The append handle
 * of a recently written chat stays open (bounded), so a turn costs one write + one fdatasync.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { isRecord, isErrorCode, CHAT_ID_PATTERN } from '@cashcode/contracts';
import { constants as fsConstants, promises as fs, statSync, writeSync, type BigIntStats, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate, openPrivate, writeFilePrivate } from '../common/private-fs';
import { trimTrailing } from '../common/trim';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import {
  answerRecords,
  failedTurnRecord,
  parseHistoryLine,
  recordToMessage,
  summaryToMessage,
  serializeHistoryRecord,
  turnRecords,
  type PendingRecord,
} from './history-record';
import {
  parseHistoryBuffer,
  scanHistoryBackward,
  type LinePosition,
  type ReadAt,
  type SmartLoadResult,
} from './history-scan';
import { formatLocalMinute } from './local-time';
import { MemoryError } from './memory.errors';
import type {
  ChatMessage,
  ChatMetadata,
  ChatState,
  FinalAnswer,
  HistoryRecord,
  LongTermMemorySaveResult,
  StoredSessionSummary,
  TurnErrorMarker,
  UserTurnInput,
} from './memory.types';

/** where large tool results are kept, inside a chat's directory */
export const ARTIFACTS_DIR = 'artifacts';
/** an artifact id: what a tool call id may safely become as a file name */
export const ARTIFACT_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;

/** The clock used for record timestamps and MEMORY.md lines; tests provide a fixed one. */
export const MEMORY_CLOCK = Symbol('MEMORY_CLOCK');
export type MemoryClock = () => Date;

/** The built-in persona used when SOUL.md is missing or blank (openspec agent-runner). */
export const DEFAULT_SOUL = [
  'You are CashCode, a capable local-first AI assistant with persistent memory.',
  '',
  '## Tool rules',
  '- Call save_memory when the user explicitly asks you to remember durable information (preferences, facts about',
  '  them, long-lived decisions).',
  '- Do not save temporary queries, small talk or information that only matters for the current conversation.',
  '- Use the available tools when they help you answer accurately; explain briefly what you did.',
].join('\n');

const HISTORY_FILE = 'history.jsonl';
/**
 * additive metadata.json key: `auto` for the fallback title of the first message, `model` for a model-written one;
 * absent for a title the user set (a rename removes it) and for chats of the original server.
 */
export const TITLE_SOURCE_KEY = 'title_source';
const CURSOR_FILE = '.cursor';
const METADATA_FILE = 'metadata.json';
const SOUL_FILE = 'SOUL.md';
const LONG_TERM_FILE = 'MEMORY.md';
/**
 * history.jsonl is appended through O_DSYNC where the platform has it: each write returns once the data is on disk
 * (what write + fdatasync gives, in one system call instead of two); elsewhere the append is followed by datasync().
 */
const APPEND_IS_DSYNC = typeof fsConstants.O_DSYNC === 'number' && fsConstants.O_DSYNC !== 0;
const APPEND_FLAGS =
  fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | (APPEND_IS_DSYNC ? fsConstants.O_DSYNC : 0);
/** malformed-line offsets logged per load, at most */
const MAX_LOGGED_OFFSETS = 10;
/** parallel stat/read calls while listing sessions */
const LIST_CONCURRENCY = 16;

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

/** The records with `supersedes` set on the first one when the append replaces earlier records. */
function branched(records: PendingRecord[], options: AppendOptions): PendingRecord[] {
  if (options.supersedes === undefined || records.length === 0) return records;
  return [{ ...records[0]!, supersedes: options.supersedes }, ...records.slice(1)];
}

/** writeAll on the calling thread (see AppendOptions.inline). */
function writeAllInline(handle: fs.FileHandle, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    const bytesWritten = writeSync(handle.fd, data, offset, data.length - offset);
    if (bytesWritten <= 0) throw new Error('history append wrote no bytes');
    offset += bytesWritten;
  }
}

/** How a turn is appended. */
export interface AppendOptions {
  /**
   * Write on the event loop instead of the thread pool. For a caller with nothing else in flight (the only running
   * turn): the loop would only wait for the disk anyway, and the thread-pool round trip adds two thread wake-ups to
   * the turn (about half a millisecond on a small VM). With other turns running, appends go through the thread pool
   * so that no chat waits for another chat's disk write.
   */
  inline?: boolean;
  /**
   * The first record written replaces the current-branch records from this cursor on (regenerate, edit, continue;
   * history-branch.ts). The cached model context is then re-read from disk.
   */
  supersedes?: number;
}

interface WriterState {
  nextCursor: number;
}

/** Size and mtime (ms) of a history.jsonl. */
export interface HistoryFileStat {
  size: number;
  mtimeMs: number;
}

/** Called after records were appended to a chat's history.jsonl (the session index keeps itself current with it). */
export type AppendListener = (chatId: string, records: readonly HistoryRecord[]) => void;

/** The global Markdown files of the memory directory that can be read raw and replaced (REST, Dream, revert). */
export type MemoryDocument = 'MEMORY.md' | 'SOUL.md';

/** What an update function decided: `null` leaves the file as it is. */
export interface MemoryDocumentUpdate<T> {
  content: string | null;
  result: T;
}

function readerFor(handle: fs.FileHandle): ReadAt {
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

@Injectable()
export class MemoryStore implements OnApplicationShutdown {
  private readonly logger = new Logger(MemoryStore.name);
  private readonly memoryDir: string;
  private readonly now: MemoryClock;
  /** see documentRevision */
  private revision = 0;
  /** loaded chats, least recently used first */
  private readonly states = new Map<string, ChatState>();
  private readonly loading = new Map<string, Promise<ChatState>>();
  /** tail of each chat's operation chain */
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly writers = new Map<string, WriterState>();
  /**
   * chats deleted since their last getChat: a late append of a turn that was running is dropped, so a deleted chat
   * never comes back
   */
  private readonly deleted = new Set<string>();
  private longTermLane: Promise<void> = Promise.resolve();
  private soulLane: Promise<void> = Promise.resolve();
  private readonly appendListeners = new Set<AppendListener>();
  /** SOUL.md / MEMORY.md text with the identity of the file it was read from (readCurrentText) */
  private readonly textCache = new Map<string, { key: string; text: string }>();
  /** open append handles of history.jsonl files, least recently used first */
  private readonly appendHandles = new Map<string, fs.FileHandle>();
  /** .cursor hints not written yet: chat → last cursor appended */
  private readonly cursorHintsDue = new Map<string, number>();
  private cursorHintTimer: NodeJS.Timeout | null = null;
  /** loaded chats kept in memory; the least recently used idle ones are evicted beyond this */
  maxCachedChats = 1000;
  /** history.jsonl append handles kept open; the least recently used idle ones are closed beyond this */
  maxOpenAppendHandles = 64;
  /** how long after an append its .cursor hint is written (appends meanwhile are coalesced into one write) */
  cursorHintDelayMs = 500;
  /** bytes read per step when loading a history from its end */
  chunkBytes = 64 * 1024;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Optional() @Inject(MEMORY_CLOCK) clock?: MemoryClock) {
    this.memoryDir = config.memoryDir;
    this.now = clock ?? (() => new Date());
  }

  // ---------------------------------------------------------------------------------------------- chats

  /**
   * The chat's smart-loaded history and metadata, loaded once per process and cached. Does not create anything
   * on disk; an unknown chat is an empty state.
   */
  async getChat(chatId: string): Promise<ChatState> {
    this.assertChatId(chatId);
    this.deleted.delete(chatId);
    const cached = this.states.get(chatId);
    if (cached) {
      this.states.delete(chatId);
      this.states.set(chatId, cached);
      return cached;
    }
    const inFlight = this.loading.get(chatId);
    if (inFlight) return inFlight;
    const load = this.enqueue(chatId, async () => {
      const existing = this.states.get(chatId);
      if (existing) return existing;
      const [history, metadata] = await Promise.all([this.loadHistory(chatId), this.readMetadata(chatId)]);
      const state: ChatState = { chatId, history: history.messages, metadata };
      this.cache(chatId, state);
      return state;
    });
    this.loading.set(chatId, load);
    try {
      return await load;
    } finally {
      this.loading.delete(chatId);
    }
  }

  /** Resolves when every operation queued so far (on all chats, or on one) has finished. */
  async flush(chatId?: string): Promise<void> {
    this.writeDueCursorHints(chatId);
    const lanes = chatId === undefined ? [...this.lanes.values()] : [this.lanes.get(chatId) ?? Promise.resolve()];
    await Promise.all([...lanes, this.longTermLane, this.soulLane]);
    if ([...this.lanes.keys()].some((id) => chatId === undefined || id === chatId)) await this.flush(chatId);
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

  /** Drops the cached state of a chat; the next getChat reads it from disk again. */
  forgetChat(chatId: string): void {
    this.states.delete(chatId);
  }

  /** Re-reads the chat's history from disk into the cached state (after a consolidation summary was appended). */
  async reloadHistory(chatId: string): Promise<ChatMessage[]> {
    this.assertChatId(chatId);
    return this.enqueue(chatId, async () => {
      const history = await this.loadHistory(chatId);
      const cached = this.states.get(chatId);
      if (cached) cached.history = history.messages;
      return history.messages;
    });
  }

  async chatExists(chatId: string): Promise<boolean> {
    this.assertChatId(chatId);
    return this.isChatDirectory(chatId);
  }

  /** Writes metadata.json (pretty, atomic), creating the chat directory; the cached state takes the same object. */
  async saveMetadata(chatId: string, metadata: ChatMetadata): Promise<void> {
    this.assertChatId(chatId);
    const text = `${JSON.stringify(metadata, null, 2)}\n`;
    await this.enqueue(chatId, async () => {
      if (this.deleted.has(chatId)) {
        this.logger.warn(`event=memory.metadata.skipped chat_id=${chatId} reason=deleted`);
        return;
      }
      await mkdirPrivate(this.chatDir(chatId));
      await writeFileAtomic(join(this.chatDir(chatId), METADATA_FILE), text);
      const cached = this.states.get(chatId);
      if (cached && cached.metadata !== metadata) cached.metadata = metadata;
    });
  }

  /**
   * Persists one turn (openspec memory) as a single append of complete lines with consecutive cursors, then extends the
   * cached history with the same messages a reload would produce. Resolves once the lines are on disk.
   * Returns the records written (none when the chat was deleted while the turn ran).
   */
  async appendTurn(
    chatId: string,
    user: UserTurnInput,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options: AppendOptions = {},
  ): Promise<HistoryRecord[]> {
    this.assertChatId(chatId);
    return this.appendRecords(chatId, branched(turnRecords(user, durable, final), options), true, options.inline === true);
  }

  /**
   * Persists the continuation of a stopped answer (openspec sessions "Requirement: Regenerate, edit and continue"): the
   * turn's durable messages and the continued answer, without a user record; the first record supersedes the stopped
   * answer at `options.supersedes`.
   */
  async appendContinuation(
    chatId: string,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options: AppendOptions & { supersedes: number },
  ): Promise<HistoryRecord[]> {
    this.assertChatId(chatId);
    return this.appendRecords(chatId, branched(answerRecords(durable, final), options), true, options.inline === true);
  }

  /**
   * The model context of the current branch before `cursor` (the summary message first when consolidated): what a
   * regenerated or edited message is answered with.
   */
  async historyBefore(chatId: string, cursor: number): Promise<ChatMessage[]> {
    this.assertChatId(chatId);
    return this.enqueue(chatId, async () => {
      const loaded = await this.loadHistory(chatId);
      const messages: ChatMessage[] = [];
      const summary = loaded.summary ? summaryToMessage(loaded.summary) : null;
      if (summary) messages.push(summary);
      for (const record of loaded.records) {
        if (record.cursor >= cursor) break;
        const message = recordToMessage(record);
        if (message) messages.push(message);
      }
      return messages;
    });
  }

  /**
   * Persists the user message of a failed turn with its error marker (openspec sessions). The cached history is not
   * extended: the record is not part of the model context. Returns the record written (none for a deleted chat).
   */
  async appendFailedTurn(
    chatId: string,
    user: UserTurnInput,
    error: TurnErrorMarker,
    options: AppendOptions = {},
  ): Promise<HistoryRecord[]> {
    this.assertChatId(chatId);
    const records = branched([failedTurnRecord(user, error)], options);
    // a failed edit or regenerate still replaces what it was sent for: the cached context is re-read
    return this.appendRecords(chatId, records, options.supersedes !== undefined, options.inline === true);
  }

  /** Appends a consolidation summary record (openspec memory); call reloadHistory afterwards. */
  async appendSummary(chatId: string, content: string, keepFromCursor: number | null): Promise<HistoryRecord> {
    this.assertChatId(chatId);
    const record: PendingRecord = { role: 'summary', content };
    if (keepFromCursor !== null) record.keep_from_cursor = keepFromCursor;
    const [written] = await this.appendRecords(chatId, [record], false, false);
    if (!written) throw new MemoryError('session_not_found');
    return written;
  }

  /** Every valid record of the chat in file order (torn tail dropped, malformed lines skipped and logged). */
  async readRecords(chatId: string): Promise<HistoryRecord[]> {
    return (await this.readRecordsWithPositions(chatId)).records;
  }

  /** readRecords with the position of each record's line in history.jsonl (the session index keeps them). */
  async readRecordsWithPositions(chatId: string): Promise<{ records: HistoryRecord[]; positions: LinePosition[] }> {
    this.assertChatId(chatId);
    let data: Buffer;
    try {
      data = await fs.readFile(this.historyPath(chatId));
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
    this.assertChatId(chatId);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.historyPath(chatId), 'r');
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

  /**
   * The records a smart load keeps (openspec memory): the last summary (or null) and every later kept non-summary
   * record, in file order, read from the end of the file on the chat's lane. The cached history equals the summary
   * message followed by these records as messages; the consolidator uses it to know the cursor of each message.
   */
  async readKeptTail(chatId: string): Promise<{ summary: HistoryRecord | null; records: HistoryRecord[] }> {
    this.assertChatId(chatId);
    return this.enqueue(chatId, async () => {
      const loaded = await this.loadHistory(chatId);
      return { summary: loaded.summary, records: loaded.records };
    });
  }

  /** Cursor of the chat's last valid record (0 when it has none), reading only the tail of the file. */
  async lastCursor(chatId: string): Promise<number> {
    this.assertChatId(chatId);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.historyPath(chatId), 'r');
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

  /** The chat's title from its (cached or stored) metadata; null when it has none. */
  async chatTitle(chatId: string): Promise<string | null> {
    this.assertChatId(chatId);
    const cached = this.states.get(chatId);
    const metadata = cached ? cached.metadata : await this.readMetadata(chatId);
    return typeof metadata.title === 'string' && metadata.title.trim() !== '' ? metadata.title : null;
  }

  /**
   * Size and mtime of the chat's history.jsonl (null when there is none), from one `stat`: the session index compares
   * them with what it recorded to know whether the chat is indexed, without reading the history.
   */
  async historyFileState(chatId: string): Promise<HistoryFileStat | null> {
    this.assertChatId(chatId);
    try {
      const { size, mtimeMs } = await fs.stat(this.historyPath(chatId));
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
    this.assertChatId(chatId);
    try {
      const { size, mtimeMs } = statSync(this.historyPath(chatId));
      return { size, mtimeMs };
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return null;
      throw error;
    }
  }

  /** Ids of every chat directory (non-hidden, valid chat id), unsorted; reads only the directory listing. */
  async listChatIds(): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(this.memoryDir, { withFileTypes: true });
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return [];
      throw error;
    }
    return entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && CHAT_ID_PATTERN.test(entry.name))
      .map((entry) => entry.name);
  }

  /** Registers a listener told about every append (after it is on disk); returns the unsubscribe function. */
  onAppend(listener: AppendListener): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /** Renames a chat on disk and in the cache; throws `session_not_found` when the directory is missing. */
  async renameChat(chatId: string, title: string): Promise<string> {
    this.assertChatId(chatId);
    return this.enqueue(chatId, async () => {
      if (!(await this.isChatDirectory(chatId))) throw new MemoryError('session_not_found');
      const cached = this.states.get(chatId);
      const metadata = cached ? cached.metadata : await this.readMetadata(chatId);
      metadata.title = title;
      // a title the user chose is never replaced by a model-written one
      delete metadata[TITLE_SOURCE_KEY];
      await writeFileAtomic(join(this.chatDir(chatId), METADATA_FILE), `${JSON.stringify(metadata, null, 2)}\n`);
      return title;
    });
  }

  /**
   * Replaces the automatic title `expected` (metadata `title_source: "auto"`; `''`: no title yet) with `title`, on the
   * chat's lane; does nothing after a rename or any other title change. Resolves with whether it was replaced.
   */
  async replaceAutomaticTitle(chatId: string, expected: string, title: string): Promise<boolean> {
    this.assertChatId(chatId);
    return this.enqueue(chatId, async () => {
      if (this.deleted.has(chatId) || !(await this.isChatDirectory(chatId))) return false;
      const cached = this.states.get(chatId);
      const metadata = cached ? cached.metadata : await this.readMetadata(chatId);
      const current = typeof metadata.title === 'string' ? metadata.title : '';
      const automatic = expected === '' ? current === '' : metadata[TITLE_SOURCE_KEY] === 'auto' && current === expected;
      if (!automatic) return false;
      metadata.title = title;
      metadata[TITLE_SOURCE_KEY] = 'model';
      await writeFileAtomic(join(this.chatDir(chatId), METADATA_FILE), `${JSON.stringify(metadata, null, 2)}\n`);
      return true;
    });
  }

  /**
   * Removes the chat directory and forgets the chat (cache, cursor state); a turn of that chat that finishes
   * later writes nothing. Throws `session_not_found` when the directory is missing.
   */
  async deleteChat(chatId: string): Promise<void> {
    this.assertChatId(chatId);
    await this.enqueue(chatId, async () => {
      if (!(await this.isChatDirectory(chatId))) throw new MemoryError('session_not_found');
      await this.closeAppendHandle(chatId);
      this.cursorHintsDue.delete(chatId);
      await fs.rm(this.chatDir(chatId), { recursive: true, force: true });
      this.states.delete(chatId);
      this.writers.delete(chatId);
      this.deleted.add(chatId);
      this.logger.log(`event=memory.chat.deleted chat_id=${chatId}`);
    });
  }

  /**
   * Keeps a large tool result whole in the chat's `artifacts/<id>.txt` (0600, atomic). Only for an existing chat
   * directory of a chat not deleted meanwhile: returns false (nothing written) otherwise, so a stateless caller never
   * creates a chat.
   */
  async saveArtifact(chatId: string, id: string, text: string): Promise<boolean> {
    this.assertChatId(chatId);
    if (!ARTIFACT_ID_PATTERN.test(id)) return false;
    return this.enqueue(chatId, async () => {
      if (this.deleted.has(chatId) || !(await this.isChatDirectory(chatId))) return false;
      const dir = join(this.chatDir(chatId), ARTIFACTS_DIR);
      await mkdirPrivate(dir);
      await writeFileAtomic(join(dir, `${id}.txt`), text);
      return true;
    });
  }

  /** The text of an artifact of the chat, or null when there is none by that id. */
  async readArtifact(chatId: string, id: string): Promise<string | null> {
    this.assertChatId(chatId);
    if (!ARTIFACT_ID_PATTERN.test(id)) return null;
    try {
      return await fs.readFile(join(this.chatDir(chatId), ARTIFACTS_DIR, `${id}.txt`), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null;
      throw error;
    }
  }

  /** Every chat directory (non-hidden, valid chat id) with its title and last update; unsorted. */
  async listSessions(): Promise<StoredSessionSummary[]> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(this.memoryDir, { withFileTypes: true });
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return [];
      throw error;
    }
    const ids = entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && CHAT_ID_PATTERN.test(entry.name))
      .map((entry) => entry.name);
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

  // ---------------------------------------------------------------------------------------------- SOUL / MEMORY

  /**
   * SOUL.md trimmed, or the built-in English persona when it is missing or blank (openspec agent-runner). Checked on
   * each call (an edit takes effect on the next turn); the text is re-read when the file changed.
   */
  async readSoul(): Promise<string> {
    const soul = (await this.readCurrentText(SOUL_FILE)).trim();
    return soul !== '' ? soul : DEFAULT_SOUL;
  }

  /** MEMORY.md trimmed ('' when missing); global to all chats (openspec memory). Checked on each call like readSoul. */
  async readLongTermMemory(): Promise<string> {
    return (await this.readCurrentText(LONG_TERM_FILE)).trim();
  }

  /**
   * Adds `[YYYY-MM-DD HH:MM] <content>` to MEMORY.md unless the text already occurs in it (openspec builtin-tools).
   * Trailing newlines of the file are collapsed to one separator; the file ends with `\n`; the write is atomic.
   * Calls are serialised, so two concurrent saves never lose each other. `content` must be trimmed and non-empty.
   */
  /**
   * Counts the deliberate edits of MEMORY.md and SOUL.md made through this store (save_memory, the REST editor, a Dream
   * revert; not a Dream rewrite, which passes `deferred`): a chat's system prompt snapshot is taken again at its next
   * turn when this changed (agent/system-prompt.ts).
   */
  get documentRevision(): number {
    return this.revision;
  }

  async saveLongTermMemory(content: string): Promise<LongTermMemorySaveResult> {
    const run = this.longTermLane.then(async (): Promise<LongTermMemorySaveResult> => {
      const existing = await this.readOptionalText(LONG_TERM_FILE);
      if (existing.includes(content)) return 'duplicate';
      const head = trimTrailing(existing, '\n');
      const line = `[${formatLocalMinute(this.now())}] ${content}`;
      await mkdirPrivate(this.memoryDir);
      await writeFileAtomic(join(this.memoryDir, LONG_TERM_FILE), head === '' ? `${line}\n` : `${head}\n${line}\n`);
      this.revision++;
      this.logger.log(`event=memory.long_term.saved chars=${content.length}`);
      return 'saved';
    });
    this.longTermLane = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The raw text of MEMORY.md or SOUL.md ('' when missing), not trimmed. */
  async readDocument(document: MemoryDocument): Promise<string> {
    return this.readOptionalText(document);
  }

  /**
   * Reads the document and lets `update` decide its new content, on the document's lane: serialised with every other
   * write of that file (save_memory, REST edits, Dream, revert), so a read-modify-write never loses a concurrent
   * change. A non-null `content` replaces the file atomically. Errors thrown by `update` leave the file unchanged.
   * `deferred` (a Dream rewrite): the change reaches running chats at their next context boundary only.
   */
  async updateDocument<T>(
    document: MemoryDocument,
    update: (current: string) => Promise<MemoryDocumentUpdate<T>> | MemoryDocumentUpdate<T>,
    options: { deferred?: boolean } = {},
  ): Promise<T> {
    const lane = document === LONG_TERM_FILE ? this.longTermLane : this.soulLane;
    const run = lane.then(async (): Promise<T> => {
      const current = await this.readOptionalText(document);
      const decision = await update(current);
      if (decision.content !== null && decision.content !== current) {
        await mkdirPrivate(this.memoryDir);
        await writeFileAtomic(join(this.memoryDir, document), decision.content);
        if (options.deferred !== true) this.revision++;
        this.logger.log(`event=memory.document.replaced document=${document} chars=${decision.content.length}`);
      }
      return decision.result;
    });
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    if (document === LONG_TERM_FILE) this.longTermLane = tail;
    else this.soulLane = tail;
    return run;
  }

  // ---------------------------------------------------------------------------------------------- internals

  private assertChatId(chatId: string): void {
    if (typeof chatId !== 'string' || !CHAT_ID_PATTERN.test(chatId)) throw new MemoryError('invalid_chat_id');
  }

  private chatDir(chatId: string): string {
    return join(this.memoryDir, chatId);
  }

  private historyPath(chatId: string): string {
    return join(this.chatDir(chatId), HISTORY_FILE);
  }

  /** Runs `task` after every earlier operation on the same chat (whether they failed or not). */
  private enqueue<T>(chatId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.lanes.get(chatId) ?? Promise.resolve();
    const run = previous.then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.lanes.set(chatId, tail);
    void tail.then(() => {
      if (this.lanes.get(chatId) === tail) this.lanes.delete(chatId);
    });
    return run;
  }

  private cache(chatId: string, state: ChatState): void {
    this.states.set(chatId, state);
    if (this.states.size <= this.maxCachedChats) return;
    for (const id of this.states.keys()) {
      if (this.states.size <= this.maxCachedChats) break;
      if (id !== chatId && !this.lanes.has(id)) this.states.delete(id);
    }
  }

  private async isChatDirectory(chatId: string): Promise<boolean> {
    try {
      return (await fs.lstat(this.chatDir(chatId))).isDirectory();
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return false;
      throw error;
    }
  }

  private async loadHistory(chatId: string): Promise<SmartLoadResult> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.historyPath(chatId), 'r');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) {
        return {
          messages: [],
          records: [],
          summary: null,
          lastCursor: null,
          validSize: 0,
          size: 0,
          malformedOffsets: [],
          bytesRead: 0,
        };
      }
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

  private reportMalformed(chatId: string, offsets: number[]): void {
    if (offsets.length === 0) return;
    const shown = offsets.slice(0, MAX_LOGGED_OFFSETS).join(',');
    this.logger.warn(
      `event=memory.history.malformed_line chat_id=${chatId} count=${offsets.length} offsets=${shown} action=skipped`,
    );
  }

  private async readMetadata(chatId: string): Promise<ChatMetadata> {
    let text: string;
    try {
      text = await fs.readFile(join(this.chatDir(chatId), METADATA_FILE), 'utf8');
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

  private async summarize(chatId: string): Promise<StoredSessionSummary | null> {
    const dir = this.chatDir(chatId);
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
    const cached = this.states.get(chatId);
    const metadata = cached ? cached.metadata : await this.readMetadata(chatId);
    const title = typeof metadata.title === 'string' && metadata.title.trim() !== '' ? metadata.title : null;
    return { chatId, title, updatedAt };
  }

  /** First append of this process: repair a torn tail and find the next cursor. */
  private async prepareWriter(chatId: string): Promise<WriterState> {
    const known = this.writers.get(chatId);
    if (known) return known;
    await mkdirPrivate(this.chatDir(chatId));
    let lastCursor = 0;
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(this.historyPath(chatId), 'r+');
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
      void this.enqueue(id, () => this.writeCursorHint(id, cursor));
    }
  }

  /** The chat's open append handle (opened on first use; the least recently used idle handles are closed). */
  private async appendHandle(chatId: string): Promise<fs.FileHandle> {
    const known = this.appendHandles.get(chatId);
    if (known) {
      this.appendHandles.delete(chatId);
      this.appendHandles.set(chatId, known);
      return known;
    }
    const handle = await openPrivate(this.historyPath(chatId), APPEND_FLAGS);
    this.appendHandles.set(chatId, handle);
    if (this.appendHandles.size > this.maxOpenAppendHandles) {
      for (const [id, open] of this.appendHandles) {
        if (this.appendHandles.size <= this.maxOpenAppendHandles) break;
        // a chat with queued operations may be using its handle right now
        if (id === chatId || this.lanes.has(id)) continue;
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

  private async writeCursorHint(chatId: string, cursor: number): Promise<void> {
    if (this.writers.get(chatId)?.nextCursor !== cursor + 1) return; // superseded or the chat was deleted
    try {
      await writeFilePrivate(join(this.chatDir(chatId), CURSOR_FILE), String(cursor));
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return; // the chat directory is gone: nothing to hint
      this.logger.warn(`event=memory.cursor.write_failed chat_id=${chatId} error=${String((error as { code?: unknown }).code)}`);
    }
  }

  private async readCursorHint(chatId: string): Promise<number> {
    try {
      const text = (await fs.readFile(join(this.chatDir(chatId), CURSOR_FILE), 'utf8')).trim();
      const value = /^\d+$/.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(value) ? value : 0;
    } catch {
      return 0;
    }
  }

  private appendRecords(
    chatId: string,
    pending: PendingRecord[],
    extendCache: boolean,
    inline: boolean,
  ): Promise<HistoryRecord[]> {
    return this.enqueue(chatId, async () => {
      if (this.deleted.has(chatId)) {
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
        if (inline && APPEND_IS_DSYNC) writeAllInline(handle, data);
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
      const cached = this.states.get(chatId);
      if (cached && extendCache && typeof records[0]!.supersedes === 'number') {
        // records were replaced: the cached model context is the current branch again, as a reload would give it
        cached.history = (await this.loadHistory(chatId)).messages;
      } else if (cached && extendCache) {
        for (const record of records) {
          const message = recordToMessage(record);
          if (message) cached.history.push(message);
        }
      }
      for (const listener of this.appendListeners) {
        try {
          listener(chatId, records);
        } catch (error) {
          this.logger.error(
            `event=memory.append.listener_failed chat_id=${chatId} error=${error instanceof Error ? error.name : 'unknown'}`,
          );
        }
      }
      return records;
    });
  }

  /**
   * The current text of a memory-directory file ('' when missing), like readOptionalText, but only one `stat` per
   * call while the file is unchanged: the text is cached with the file's identity (inode, size, mtime, ctime in ns).
   * The stat is synchronous on purpose: a stat of a small local file costs microseconds, less than the thread-pool
   * round trip of an asynchronous one, and this runs on every turn.
   */
  private async readCurrentText(file: string): Promise<string> {
    const path = join(this.memoryDir, file);
    let stat: BigIntStats | undefined;
    try {
      stat = statSync(path, { bigint: true, throwIfNoEntry: false });
    } catch (error) {
      if (!isErrorCode(error, 'ENOTDIR')) throw error;
    }
    if (!stat) {
      this.textCache.delete(file);
      return '';
    }
    if (!stat.isFile()) return this.readOptionalText(file);
    const key = `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    const cached = this.textCache.get(file);
    if (cached && cached.key === key) return cached.text;
    const text = await this.readOptionalText(file);
    this.textCache.set(file, { key, text });
    return text;
  }

  private async readOptionalText(file: string): Promise<string> {
    try {
      return await fs.readFile(join(this.memoryDir, file), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return '';
      throw error;
    }
  }
}
