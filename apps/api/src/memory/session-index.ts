/**
 * Recall across sessions: a BM25 index (common/bm25.ts: the tokenizer shared by every search — ASCII words,
 * camelCase, CJK bigrams) over the `user` and `assistant` records of every chat. Built once in the background at
 * start, then kept current incrementally: MemoryStore tells it about every append, and a deleted session's records
 * are removed. Never rebuilt per query.
 */
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OnAppEvent } from '../events/event-bus';
import { Bm25Index, isCjkCodePoint, tokenize } from '../common/bm25';
import { formatEvent } from '../common/log-format';
import { MemoryStore } from './memory-store';
import { type HistoryRecord } from './memory.types';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';

/** characters of a record kept for snippets (the whole record is indexed) */
const STORED_CONTENT_CHARS = 20_000;
/** snippet window around the first match */
const SNIPPET_BEFORE = 80;
const SNIPPET_AFTER = 200;
export const SESSION_SEARCH_MAX_RESULTS = 20;
/** records indexed between two yields to the event loop during the initial build */
const BUILD_SLICE_RECORDS = 500;

interface IndexedRecord {
  chatId: string;
  cursor: number;
  role: 'user' | 'assistant';
  timestamp: string;
  content: string;
}

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

function isSearchable(record: HistoryRecord): record is HistoryRecord & { role: 'user' | 'assistant' } {
  return (record.role === 'user' || record.role === 'assistant') && record.content.trim() !== '';
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

@Injectable()
export class SessionIndex implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SessionIndex.name);
  private readonly index = new Bm25Index<IndexedRecord>();
  private readonly byChat = new Map<string, Map<number, IndexedRecord>>();
  /** deletions per chat, so a build that read a chat before its deletion does not add it back */
  private readonly deletions = new Map<string, number>();
  private built: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly store: MemoryStore) {}

  onApplicationBootstrap(): void {
    this.unsubscribe ??= this.store.onAppend((chatId, records) => this.addRecords(chatId, records));
    void this.ready();
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Resolves once the initial build (started at application bootstrap, or now) is done. */
  ready(): Promise<void> {
    this.unsubscribe ??= this.store.onAppend((chatId, records) => this.addRecords(chatId, records));
    this.built ??= this.build();
    return this.built;
  }

  /** Indexed records. */
  get size(): number {
    return this.index.size;
  }

  /** Adds a chat's new records (idempotent per cursor). */
  addRecords(chatId: string, records: readonly HistoryRecord[]): void {
    let chat = this.byChat.get(chatId);
    for (const record of records) {
      if (!isSearchable(record)) continue;
      if (!chat) this.byChat.set(chatId, (chat = new Map()));
      if (chat.has(record.cursor)) continue;
      const entry: IndexedRecord = {
        chatId,
        cursor: record.cursor,
        role: record.role,
        timestamp: record.timestamp,
        content: record.content.length > STORED_CONTENT_CHARS ? record.content.slice(0, STORED_CONTENT_CHARS) : record.content,
      };
      chat.set(record.cursor, entry);
      this.index.add(entry, record.content);
    }
  }

  /** Removes every record of a chat. */
  removeChat(chatId: string): void {
    this.deletions.set(chatId, (this.deletions.get(chatId) ?? 0) + 1);
    const chat = this.byChat.get(chatId);
    if (!chat) return;
    for (const entry of chat.values()) this.index.remove(entry);
    this.byChat.delete(chatId);
  }

  @OnAppEvent(SESSION_DELETED_EVENT)
  onSessionDeleted(event: SessionDeletedEvent): void {
    this.removeChat(event.chatId);
  }

  /** The best `limit` user/assistant messages of all chats for the query, best first. */
  async search(query: string, limit = 5): Promise<SessionSearchHit[]> {
    await this.ready();
    const tokens = tokenize(query);
    const hits = this.index.searchTokens(tokens, Math.max(1, Math.min(limit, SESSION_SEARCH_MAX_RESULTS)));
    const titles = new Map<string, Promise<string | null>>();
    const titleOf = (chatId: string) => {
      let title = titles.get(chatId);
      if (!title) {
        title = this.store.chatTitle(chatId).catch(() => null);
        titles.set(chatId, title);
      }
      return title;
    };
    return Promise.all(
      hits.map(async ({ key, score }) => ({
        chatId: key.chatId,
        title: await titleOf(key.chatId),
        cursor: key.cursor,
        role: key.role,
        date: key.timestamp,
        snippet: makeSnippet(key.content, tokens),
        score,
      })),
    );
  }

  private async build(): Promise<void> {
    const started = performance.now();
    let chats = 0;
    try {
      for (const chatId of await this.store.listChatIds()) {
        const deletionsBefore = this.deletions.get(chatId) ?? 0;
        const records = await this.store.readRecords(chatId);
        // index in slices, yielding to the event loop so a huge history never stalls turns at start
        for (let start = 0; start < records.length; start += BUILD_SLICE_RECORDS) {
          if ((this.deletions.get(chatId) ?? 0) !== deletionsBefore) break;
          this.addRecords(chatId, records.slice(start, start + BUILD_SLICE_RECORDS));
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        chats++;
      }
      this.logger.log(
        formatEvent('memory.session_index.built', {
          chats,
          records: this.index.size,
          duration_ms: Math.round(performance.now() - started),
        }),
      );
    } catch (error) {
      this.logger.error(
        formatEvent('memory.session_index.build_failed', { error_type: error instanceof Error ? error.name : 'unknown' }),
      );
    }
  }
}
