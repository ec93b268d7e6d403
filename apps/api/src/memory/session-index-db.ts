/**
 * The persisted session search index: one SQLite file (common/sqlite.ts: node:sqlite, WAL, owner-only), by default
 * `<dataDir>/memory-index/sessions.sqlite` (ARCHITECTURE.md "On-disk layout"). It is derived data: deleting it only
 * costs a background rebuild from the history files.
 *
 * Tables (schema version in `meta`; another version, or a file that is not a readable database, is replaced):
 * - `records`: the searchable user/assistant records — chat id, cursor, role, timestamp and the position of the
 *   record's line in history.jsonl (byte offset and length): snippets are cut from that line, read at search time for
 *   the few hits, so neither this file nor the JS heap keeps a copy of the text; the integer id is the insertion order
 *   (ties in the ranking).
 * - `record_terms`: a contentless FTS5 table (`contentless_delete=1`, rowid = records.id) over the record's search
 *   tokens. The tokens are those of the shared tokenizer (common/bm25.ts: ASCII words, camelCase split, CJK bigrams),
 *   joined by spaces, so search matches exactly as every other search of the server; FTS5's own tokenizer is `ascii`
 *   only to split that list again (it keeps every non-ASCII character, so a CJK bigram stays one term; `unicode61`
 *   would split bigrams that contain CJK punctuation). Ranking is FTS5's `bm25()` (k1 = 1.2, b = 0.75), ties in
 *   insertion order.
 * - `chats`: per chat, the size and mtime of history.jsonl when its records were last known to be all indexed. A start
 *   compares them with a `stat` of each history file only: equal means current, without reading the history.
 */
import { rmSync } from 'node:fs';
import { tokenize } from '../common/bm25';
import { inTransaction, openSqlite, type SqliteDatabase } from '../common/sqlite';
import type { LinePosition } from './history-scan';
import type { HistoryRecord } from './memory.types';

/** bumped when the tables change: an index of another version is dropped and rebuilt */
export const SESSION_INDEX_SCHEMA_VERSION = 1;

export type SearchableRecord = HistoryRecord & { role: 'user' | 'assistant' };

export function isSearchable(record: HistoryRecord): record is SearchableRecord {
  return (record.role === 'user' || record.role === 'assistant') && record.content.trim() !== '';
}

/** What a chat's history.jsonl looked like when it was last fully indexed. */
export interface HistoryFileState {
  size: number;
  mtimeMs: number;
}

export interface IndexedHit {
  chatId: string;
  cursor: number;
  role: 'user' | 'assistant';
  timestamp: string;
  /** where the record's line is in the chat's history.jsonl */
  position: LinePosition;
  score: number;
}

interface Statements {
  insertRecord: ReturnType<SqliteDatabase['prepare']>;
  insertTerms: ReturnType<SqliteDatabase['prepare']>;
  deleteTerms: ReturnType<SqliteDatabase['prepare']>;
  deleteRecords: ReturnType<SqliteDatabase['prepare']>;
  getState: ReturnType<SqliteDatabase['prepare']>;
  putState: ReturnType<SqliteDatabase['prepare']>;
  updateState: ReturnType<SqliteDatabase['prepare']>;
  deleteState: ReturnType<SqliteDatabase['prepare']>;
  search: ReturnType<SqliteDatabase['prepare']>;
  count: ReturnType<SqliteDatabase['prepare']>;
  chats: ReturnType<SqliteDatabase['prepare']>;
  documentFrequency: ReturnType<SqliteDatabase['prepare']>;
}

/**
 * A query term found in more than this share of all records is left out of the query when the query has a rarer term
 * (as a stopword would be): BM25 gives such a term little weight anyway (idf below ln(1 + 0.75 / 0.25) ≈ 1.4, against
 * about 7 for a term in one record of a thousand), but FTS5 scores every record that contains any query term, so one
 * word like "the" in the query made `bm25()` run over most of the index: 100k records, p50 28 ms → see
 * `npm run bench -- memory` for the figure with it. A query of common terms only keeps its rarest one.
 */
export const COMMON_TERM_SHARE = 0.25;

/**
 * The tokens of the query that are worth matching: every token whose term is in at most COMMON_TERM_SHARE of the
 * `total` records, or, when none is, the rarest one(s). Terms found nowhere are dropped (they match nothing); repeats of
 * a kept token stay (they weigh it more, as before).
 */
export function selectQueryTokens(tokens: readonly string[], total: number, frequency: (term: string) => number): string[] {
  const df = new Map<string, number>();
  for (const token of tokens) if (!df.has(token)) df.set(token, frequency(token));
  const present = [...df].filter(([, n]) => n > 0);
  if (present.length === 0) return [];
  const limit = total * COMMON_TERM_SHARE;
  let kept = new Set(present.filter(([, n]) => n <= limit).map(([term]) => term));
  if (kept.size === 0) {
    const rarest = Math.min(...present.map(([, n]) => n));
    kept = new Set(present.filter(([, n]) => n === rarest).map(([term]) => term));
  }
  return tokens.filter((token) => kept.has(token));
}

/** The FTS5 query for the tokens: any of them (each a quoted string), repeated tokens counting repeatedly. */
export function ftsQuery(tokens: readonly string[]): string {
  // tokens are ASCII letters/digits or CJK characters: never a double quote, quoted as FTS5 strings anyway
  return tokens.map((token) => `"${token.replaceAll('"', '""')}"`).join(' OR ');
}

export class SessionIndexDb {
  private constructor(
    private readonly db: SqliteDatabase,
    private readonly statements: Statements,
    /** true when the file was created (or replaced) now: every chat needs indexing */
    readonly created: boolean,
  ) {}

  /** Records in the index (cached; reset by every write that adds or removes records). */
  private total: number | null = null;

  /**
   * Opens the index file, creating it when missing; a file of another schema version, or one that cannot be read as
   * this index (corrupt, not a database), is deleted and created anew (`created` is then true).
   */
  static open(file: string): SessionIndexDb {
    try {
      const opened = SessionIndexDb.tryOpen(file);
      if (opened) return opened;
    } catch {
      // unreadable: replaced below
    }
    if (file !== ':memory:') {
      for (const path of [file, `${file}-wal`, `${file}-shm`]) rmSync(path, { force: true });
    }
    const fresh = SessionIndexDb.tryOpen(file);
    if (!fresh) throw new Error('session index: a new index file has an unexpected schema');
    return fresh;
  }

  /** null when the file holds another schema version */
  private static tryOpen(file: string): SessionIndexDb | null {
    const db = openSqlite(file);
    try {
      db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
      const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
      let created = false;
      if (row === undefined) {
        const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name <> 'meta'`).get() as { n: number };
        if (tables.n > 0) {
          db.close();
          return null;
        }
        inTransaction(db, () => {
          db.exec(`
            CREATE TABLE records (
              id INTEGER PRIMARY KEY,
              chat_id TEXT NOT NULL,
              cursor INTEGER NOT NULL,
              role TEXT NOT NULL,
              timestamp TEXT NOT NULL,
              line_offset INTEGER NOT NULL,
              line_length INTEGER NOT NULL,
              UNIQUE (chat_id, cursor)
            );
            CREATE VIRTUAL TABLE record_terms USING fts5(terms, content = '', contentless_delete = 1, tokenize = 'ascii');
            CREATE TABLE chats (chat_id TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms REAL NOT NULL);
          `);
          db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SESSION_INDEX_SCHEMA_VERSION));
        });
        created = true;
      } else if (row.value !== String(SESSION_INDEX_SCHEMA_VERSION)) {
        db.close();
        return null;
      }
      // a read of every table: a damaged file fails here rather than in the middle of a turn
      db.prepare('SELECT count(*) FROM chats').get();
      db.prepare('SELECT max(id) FROM records').get();
      db.prepare(`SELECT rowid FROM record_terms WHERE record_terms MATCH '"x"' LIMIT 1`).get();
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.record_vocab USING fts5vocab(main, record_terms, 'row')`);
      return new SessionIndexDb(db, SessionIndexDb.prepare(db), created);
    } catch (error) {
      if (db.isOpen) db.close();
      throw error;
    }
  }

  private static prepare(db: SqliteDatabase): Statements {
    const statements: Statements = {
      insertRecord: db.prepare(
        'INSERT OR IGNORE INTO records (chat_id, cursor, role, timestamp, line_offset, line_length) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      insertTerms: db.prepare('INSERT INTO record_terms (rowid, terms) VALUES (?, ?)'),
      deleteTerms: db.prepare('DELETE FROM record_terms WHERE rowid IN (SELECT id FROM records WHERE chat_id = ?)'),
      deleteRecords: db.prepare('DELETE FROM records WHERE chat_id = ?'),
      getState: db.prepare('SELECT size, mtime_ms FROM chats WHERE chat_id = ?'),
      putState: db.prepare(
        'INSERT INTO chats (chat_id, size, mtime_ms) VALUES (?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms',
      ),
      updateState: db.prepare('UPDATE chats SET size = ?, mtime_ms = ? WHERE chat_id = ?'),
      deleteState: db.prepare('DELETE FROM chats WHERE chat_id = ?'),
      // the best ids first (FTS5 alone), then the few records they name
      search: db.prepare(`
        SELECT r.chat_id AS chatId, r.cursor AS cursor, r.role AS role, r.timestamp AS timestamp,
               r.line_offset AS lineOffset, r.line_length AS lineLength, hits.rank AS rank
        FROM (
          SELECT rowid AS id, bm25(record_terms) AS rank FROM record_terms WHERE record_terms MATCH ?
          ORDER BY rank, rowid LIMIT ?
        ) AS hits JOIN records r ON r.id = hits.id
        ORDER BY hits.rank, hits.id`),
      count: db.prepare('SELECT count(*) AS n FROM records'),
      chats: db.prepare('SELECT chat_id AS chatId, size, mtime_ms AS mtimeMs FROM chats'),
      // records containing a term, from the FTS5 index itself (a temp view: nothing is added to the file)
      documentFrequency: db.prepare('SELECT doc FROM temp.record_vocab WHERE term = ?'),
    };
    // A delete from the contentless FTS5 table writes FTS5's own rows, which leaves the connection's last insert rowid
    // at a value above 2^53. `run()` reports that rowid, and Node 26 throws ("Value is too large to be represented as
    // a JavaScript number") unless the statement reads big integers, so every write here does; their counts are read
    // through Number().
    for (const statement of [
      statements.insertRecord,
      statements.insertTerms,
      statements.deleteTerms,
      statements.deleteRecords,
      statements.putState,
      statements.updateState,
      statements.deleteState,
    ]) {
      statement.setReadBigInts(true);
    }
    return statements;
  }

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** Indexed records. */
  get size(): number {
    this.total ??= (this.statements.count.get() as { n: number }).n;
    return this.total;
  }

  /**
   * Adds a chat's searchable records (idempotent per chat and cursor), each with the position of its line
   * (`positions` is parallel to `records`), in one transaction; with `state`, also records the history file's
   * state — `'update'` only when the chat already has one (it was current before this append).
   */
  addRecords(
    chatId: string,
    records: readonly HistoryRecord[],
    positions: readonly LinePosition[],
    state?: { file: HistoryFileState; mode: 'put' | 'update' },
  ): number {
    const { insertRecord, insertTerms, putState, updateState } = this.statements;
    return inTransaction(this.db, () => {
      let added = 0;
      for (const [i, record] of records.entries()) {
        const position = positions[i];
        if (!isSearchable(record) || !position) continue;
        const result = insertRecord.run(chatId, record.cursor, record.role, record.timestamp, position.offset, position.length);
        if (Number(result.changes) === 0) continue;
        insertTerms.run(result.lastInsertRowid, tokenize(record.content).join(' '));
        added++;
      }
      if (added > 0) this.total = null;
      if (state?.mode === 'put') putState.run(chatId, state.file.size, state.file.mtimeMs);
      else if (state?.mode === 'update') updateState.run(state.file.size, state.file.mtimeMs, chatId);
      return added;
    });
  }

  /** Removes every record of a chat and its file state. */
  removeChat(chatId: string): void {
    const { deleteTerms, deleteRecords, deleteState } = this.statements;
    inTransaction(this.db, () => {
      deleteTerms.run(chatId);
      deleteRecords.run(chatId);
      deleteState.run(chatId);
    });
    this.total = null;
  }

  /** The history file state recorded for the chat, or null when the chat is not known to be fully indexed. */
  fileState(chatId: string): HistoryFileState | null {
    const row = this.statements.getState.get(chatId) as { size: number; mtime_ms: number } | undefined;
    return row ? { size: row.size, mtimeMs: row.mtime_ms } : null;
  }

  forgetFileState(chatId: string): void {
    this.statements.deleteState.run(chatId);
  }

  setFileState(chatId: string, state: HistoryFileState): void {
    this.statements.putState.run(chatId, state.size, state.mtimeMs);
  }

  /** Every chat with a recorded file state. */
  indexedChats(): Map<string, HistoryFileState> {
    const rows = this.statements.chats.all() as Array<{ chatId: string; size: number; mtimeMs: number }>;
    return new Map(rows.map((row) => [row.chatId, { size: row.size, mtimeMs: row.mtimeMs }]));
  }

  /** The best `limit` records for the tokens, best first (empty without tokens). */
  search(tokens: readonly string[], limit: number): IndexedHit[] {
    if (tokens.length === 0 || limit <= 0) return [];
    const { documentFrequency } = this.statements;
    const selected = selectQueryTokens(tokens, this.size, (term) => (documentFrequency.get(term) as { doc: number } | undefined)?.doc ?? 0);
    if (selected.length === 0) return [];
    const rows = this.statements.search.all(ftsQuery(selected), limit) as Array<
      Omit<IndexedHit, 'score' | 'position'> & { lineOffset: number; lineLength: number; rank: number }
    >;
    return rows.map(({ rank, lineOffset, lineLength, ...row }) => ({
      ...row,
      position: { offset: lineOffset, length: lineLength },
      score: -rank,
    }));
  }
}
