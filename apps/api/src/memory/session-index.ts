/**
 * Recall across sessions: a full-text index over the `user` and `assistant` records of every chat, persisted in SQLite
 * FTS5 (session-index-db.ts: `<dataDir>/memory-index/sessions.sqlite`), so a restart reads no history and the JS heap
 * keeps no record text: the index keeps each record's line position, and a search reads the lines of its few hits
 * from history.jsonl to cut the snippets (a line that no longer holds that record drops the hit).
 *
 * - Per turn: HistoryWriter tells it about every append (on the chat's lane, after the write); the new records, their
 *   line positions (counted back from the file's new size: the append is the end of the file) and the history file's
 *   size/mtime are written in one transaction. A deleted session's records are removed. Superseded
 *   records (regenerate, edit, continue) stay indexed like any other record: they are part of the history.
 * - At start (after the server listens, in the background): one `stat` per history file, compared with the recorded
 *   size/mtime; only a chat that differs (or is unknown) is re-read and re-indexed, in time slices that yield to the
 *   event loop, so turns never wait behind it. A missing, corrupt or older-schema index file is recreated and every
 *   chat is indexed that way. Chats gone from disk are dropped from the index.
 * - A search while that sync runs waits for it at most `searchWaitMs`, then answers from what is indexed so far.
 * - If the index file cannot be opened at all, search answers no results and turns are unaffected (logged once).
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { isCjkCodePoint, tokenize } from '../common/bm25';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { OnAppEvent } from '../events/event-bus';
import { SERVER_LISTENING_EVENT, SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';
import { untrustedRecords } from './dream-batch';
import { serializeHistoryRecord } from './history-record';
import type { LinePosition } from './history-scan';
import { ChatDirectoryStore } from './chat-directory.store';
import { ChatMetadataStore } from './chat-metadata.store';
import { HistoryReader } from './history-reader';
import { HistoryWriter } from './history-writer';
import { type HistoryRecord } from './memory.types';
import { isSearchable, SessionIndexDb, type HistoryFileState } from './session-index-db';

/** snippet window around the first match */
const SNIPPET_BEFORE = 80;
const SNIPPET_AFTER = 200;
export const SESSION_SEARCH_MAX_RESULTS = 20;
/** milliseconds of indexing between two yields to the event loop while re-indexing chats */
const SLICE_MS = 8;

export interface SessionSearchHit {
  chatId: string;
  /** the chat's title, or null when it has none */
  title: string | null;
  cursor: number;
  role: 'user' | 'assistant';
  /** the record's local time `YYYY-MM-DD HH:MM` */
  date: string;
  snippet: string;
  score: number;
}

/** A window of the content around the first occurrence of any query token, whitespace collapsed. */
export function makeSnippet(content: string, tokens: readonly string[]): string {
  const lower = content.toLowerCase();
  let at = -1;
  let length = 0;
  for (const token of tokens) {
    const index = lower.indexOf(token);
    if (index !== -1 && (at === -1 || index < at)) {
      at = index;
      length = token.length;
    }
  }
  if (at === -1) at = 0;
  let start = Math.max(0, at - SNIPPET_BEFORE);
  let end = Math.min(content.length, at + length + SNIPPET_AFTER);
  // don't cut a surrogate pair
  if (start > 0 && /[\uDC00-\uDFFF]/.test(content[start] ?? '')) start--;
  if (end < content.length && /[\uD800-\uDBFF]/.test(content[end - 1] ?? '')) end++;
  // prefer word boundaries for Latin text
  if (start > 0 && !isCjkCodePoint(content.codePointAt(start) ?? 0)) {
    const space = content.indexOf(' ', start);
    if (space !== -1 && space < at) start = space + 1;
  }
  const text = content.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '… ' : ''}${text}${end < content.length ? ' …' : ''}`;
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

function sameState(a: HistoryFileState | null, b: HistoryFileState | null): boolean {
  return a !== null && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

@Injectable()
export class SessionIndex implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SessionIndex.name);
  private db: SessionIndexDb | null = null;
  /** the index file could not be opened: search answers nothing (logged once) */
  private unavailable = false;
  private destroyed = false;
  /** deletions per chat, so a sync that read a chat before its deletion does not add it back */
  private readonly deletions = new Map<string, number>();
  /** chats the running sync still has to re-index (their appends add records but record no file state) */
  private readonly pending = new Set<string>();
  /** true once the sync has compared every history file with the index */
  private compared = false;
  private synced: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  /** milliseconds a search waits for a running sync before answering from what is indexed so far */
  searchWaitMs = 1000;

  constructor(
    private readonly history: HistoryReader,
    private readonly writer: HistoryWriter,
    private readonly metadata: ChatMetadataStore,
    private readonly chats: ChatDirectoryStore,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'sessionIndexFile'>,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe ??= this.writer.onAppend((chatId, records) => this.onAppend(chatId, records));
  }

  /** The sync starts once the server listens, so it never delays the first health answer. */
  @OnAppEvent(SERVER_LISTENING_EVENT)
  onServerListening(): void {
    setImmediate(() => void this.ready());
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.destroyed = true;
    const db = this.db;
    this.db = null;
    // a running sync notices the closed index and stops
    db?.close();
  }

  /** Resolves once the index is in step with the history files (the sync started after listen, or now). */
  ready(): Promise<void> {
    this.unsubscribe ??= this.writer.onAppend((chatId, records) => this.onAppend(chatId, records));
    this.synced ??= this.sync();
    return this.synced;
  }

  /** Indexed records. */
  get size(): number {
    return this.open()?.size ?? 0;
  }

  /**
   * Adds a chat's records with the positions of their lines (parallel arrays; idempotent per cursor); no file state
   * is recorded (the next start re-checks the chat).
   */
  addRecords(chatId: string, records: readonly HistoryRecord[], positions: readonly LinePosition[]): void {
    this.guard('add', () => this.open()?.addRecords(chatId, records, positions));
  }

  /** Removes every record of a chat. */
  removeChat(chatId: string): void {
    this.deletions.set(chatId, (this.deletions.get(chatId) ?? 0) + 1);
    this.pending.delete(chatId);
    this.guard('remove', () => this.open()?.removeChat(chatId));
  }

  @OnAppEvent(SESSION_DELETED_EVENT)
  onSessionDeleted(event: SessionDeletedEvent): void {
    this.removeChat(event.chatId);
  }

  /**
   * The best `limit` user/assistant messages of all chats for the query, best first; `ownerWordsOnly`: without what
   * someone other than the owner wrote or what followed untrusted content (withoutUntrusted)
   */
  async search(query: string, limit = 5, options: { ownerWordsOnly?: boolean } = {}): Promise<SessionSearchHit[]> {
    const ready = this.ready();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.searchWaitMs)))]);
    clearTimeout(timer);
    const tokens = tokenize(query);
    const hits = this.guard('search', () => this.open()?.search(tokens, Math.max(1, Math.min(limit, SESSION_SEARCH_MAX_RESULTS)))) ?? [];
    // the hits' lines, read once per chat: the snippet text and a check that the line still holds that record
    const lines = new Map<string, Promise<Array<HistoryRecord | null>>>();
    for (const chatId of new Set(hits.map((hit) => hit.chatId))) {
      const positions = hits.filter((hit) => hit.chatId === chatId).map((hit) => hit.position);
      lines.set(chatId, this.history.readRecordsAt(chatId, positions).catch(() => positions.map(() => null)));
    }
    const titles = new Map<string, Promise<string | null>>();
    const titleOf = (chatId: string) => {
      let title = titles.get(chatId);
      if (!title) {
        title = this.metadata.chatTitle(chatId).catch(() => null);
        titles.set(chatId, title);
      }
      return title;
    };
    const seen = new Map<string, number>();
    const results = await Promise.all(
      hits.map(async (hit) => {
        const at = seen.get(hit.chatId) ?? 0;
        seen.set(hit.chatId, at + 1);
        const record = (await lines.get(hit.chatId)!)[at];
        if (!record || record.cursor !== hit.cursor || !isSearchable(record)) return null;
        return {
          chatId: hit.chatId,
          title: await titleOf(hit.chatId),
          cursor: hit.cursor,
          role: hit.role,
          date: hit.timestamp,
          snippet: makeSnippet(record.content, tokens),
          score: hit.score,
        };
      }),
    );
    const found = results.filter((hit): hit is SessionSearchHit => hit !== null);
    return options.ownerWordsOnly === true ? this.withoutUntrusted(found) : found;
  }

  /**
   * For the model's recall (session_search; the owner's own search in the console lists everything): the hits without
   * the messages Dream would not read either (dream-batch.ts): a message of someone other than the
   * owner, and every answer from a chat's first untrusted content on — recall must not hand someone else's words to
   * another chat as the owner's (where a memory write would then not ask). An unreadable chat keeps no hits.
   */
  private async withoutUntrusted(hits: SessionSearchHit[]): Promise<SessionSearchHit[]> {
    const taintedByChat = new Map<string, Promise<Set<number> | null>>();
    for (const chatId of new Set(hits.map((hit) => hit.chatId))) {
      taintedByChat.set(
        chatId,
        this.history.readRecords(chatId).then(
          (records) => {
            const tagged = records.map((record) => ({ chatId, record }));
            return new Set([...untrustedRecords(tagged)].map((entry) => entry.record.cursor));
          },
          () => null,
        ),
      );
    }
    const kept: SessionSearchHit[] = [];
    for (const hit of hits) {
      const tainted = await taintedByChat.get(hit.chatId);
      if (tainted && !tainted.has(hit.cursor)) kept.push(hit);
    }
    return kept;
  }

  /** The open index (opened, and recreated when unusable, on first use); null when it cannot be opened. */
  private open(): SessionIndexDb | null {
    if (this.db?.isOpen) return this.db;
    if (this.unavailable || this.destroyed) return null;
    try {
      this.db = SessionIndexDb.open(this.config.sessionIndexFile);
      if (this.db.created) this.logger.log(formatEvent('memory.session_index.created', {}));
      return this.db;
    } catch (error) {
      this.unavailable = true;
      this.logger.error(
        formatEvent('memory.session_index.unavailable', { error_type: error instanceof Error ? error.name : 'unknown' }),
      );
      return null;
    }
  }

  /** Runs an index operation; a failure is logged and never reaches the caller (a turn, a deletion, a search). */
  private guard<T>(operation: string, work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      this.logger.error(
        formatEvent('memory.session_index.failed', { operation, error_type: error instanceof Error ? error.name : 'unknown' }),
      );
      return undefined;
    }
  }

  /**
   * An append (on the chat's lane, right after the write): the records and the file's new size/mtime in one
   * transaction. The file state is recorded only for a chat that is current: one with a state already, or one the
   * sync has not to re-index (a new chat); a chat still pending gets its state from the sync.
   */
  private onAppend(chatId: string, records: readonly HistoryRecord[]): void {
    this.guard('append', () => {
      const db = this.open();
      if (!db) return;
      const file = this.history.historyFileStateSync(chatId);
      if (!file) return;
      // the append is the end of the file: its lines, counted back from the file's size
      const positions: LinePosition[] = new Array<LinePosition>(records.length);
      let end = file.size;
      for (let i = records.length - 1; i >= 0; i--) {
        const length = Buffer.byteLength(serializeHistoryRecord(records[i]!), 'utf8');
        end -= length + 1;
        positions[i] = { offset: end, length };
      }
      const current = this.compared && !this.pending.has(chatId);
      db.addRecords(chatId, records, positions, { file, mode: current ? 'put' : 'update' });
    });
  }

  private async sync(): Promise<void> {
    const started = performance.now();
    let reindexed = 0;
    try {
      const db = this.open();
      if (!db) return;
      const indexed = db.indexedChats();
      const chatIds = await this.chats.listChatIds();
      if (!db.isOpen) return; // closed meanwhile (module destroyed)
      const onDisk = new Set(chatIds);
      for (const chatId of indexed.keys()) {
        if (!onDisk.has(chatId)) db.removeChat(chatId);
      }
      // one stat per history file: a chat whose size and mtime are those recorded is current. On this thread, in time
      // slices: a local stat costs microseconds (200 chats: ~1 ms), while 200 stats through libuv's 4 pool threads kept a
      // restart's first turn waiting behind them (health → first done at 200k records: ~1.3× the empty data dir)
      const states = new Map<string, HistoryFileState | null>();
      let next = 0;
      while (next < chatIds.length) {
        const sliceStart = performance.now();
        do {
          const chatId = chatIds[next++]!;
          states.set(chatId, this.history.historyFileStateSync(chatId));
        } while (next < chatIds.length && performance.now() - sliceStart < SLICE_MS);
        await nextTick();
        if (!db.isOpen) return;
      }
      for (const chatId of chatIds) {
        const recorded = db.fileState(chatId);
        const state = states.get(chatId) ?? null;
        if (state === null && recorded === null) continue; // a chat without history: nothing to index
        if (sameState(recorded, state)) continue;
        // no longer known to be current: an append before its re-index must not record a state for it
        this.pending.add(chatId);
        if (recorded) db.forgetFileState(chatId);
      }
      this.compared = true;
      for (const chatId of chatIds) {
        if (!this.pending.has(chatId)) continue;
        if (!this.db?.isOpen) return; // closed (module destroyed)
        await this.reindexChat(chatId);
        reindexed++;
      }
      this.logger.log(
        formatEvent('memory.session_index.built', {
          chats: chatIds.length,
          reindexed,
          // counted only after a re-index: a COUNT over every record (2–4 ms at 200k) would delay a restart's first turn
          ...(reindexed > 0 && this.db?.isOpen ? { records: this.db.size } : {}),
          duration_ms: Math.round(performance.now() - started),
        }),
      );
    } catch (error) {
      this.logger.error(
        formatEvent('memory.session_index.build_failed', { error_type: error instanceof Error ? error.name : 'unknown' }),
      );
    } finally {
      // chats still pending (a failed sync) stay so: no append records a state for them, the next start re-checks them
      this.compared = true;
    }
  }

  /**
   * Re-reads one chat's history and indexes it from scratch, in time slices. The file state recorded at the end is
   * the one stat'ed before reading: appends meanwhile are indexed by onAppend, and a state older than the file only
   * makes the next start re-check the chat.
   */
  private async reindexChat(chatId: string): Promise<void> {
    const deletionsBefore = this.deletions.get(chatId) ?? 0;
    const deleted = () => (this.deletions.get(chatId) ?? 0) !== deletionsBefore;
    const state = await this.history.historyFileState(chatId);
    if (deleted() || !this.db?.isOpen) return;
    this.db.removeChat(chatId);
    const { records, positions } = await this.history.readRecordsWithPositions(chatId);
    let at = 0;
    while (at < records.length) {
      if (deleted() || !this.db?.isOpen) return;
      const sliceStart = performance.now();
      // whole turns of records per transaction until the slice's time is used up
      let end = at;
      do {
        end = Math.min(records.length, end + 50);
        this.db.addRecords(chatId, records.slice(at, end), positions.slice(at, end));
        at = end;
      } while (at < records.length && performance.now() - sliceStart < SLICE_MS);
      await nextTick();
    }
    if (deleted() || !this.db?.isOpen || !this.pending.has(chatId)) return;
    if (state) this.db.setFileState(chatId, state);
    this.pending.delete(chatId);
  }
}
