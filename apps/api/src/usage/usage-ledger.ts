/**
 * The usage ledger (openspec usage "Requirement: Usage ledger"): one row per model call in an embedded SQLite file,
 * `<dataDir>/usage/ledger.sqlite` (common/sqlite.ts: WAL, owner-only). The local day is stored with each call and
 * indexed with provider, model and purpose, so summaries and window totals group in SQL over the days they ask for
 * instead of reading everything. One prepared insert per call; rows older than the retention are pruned.
 */
import type {
  LlmProvider,
  ModelCallOutcome,
  ModelCallPurpose,

  UsageRecord,
  UsageRecordsPage,
  UsageSummaryRow,
  UsageTotals,
} from '@cashcode/contracts';
import { inTransaction, openSqlite, type SqliteDatabase } from '../common/sqlite';
import type { StatementSync } from 'node:sqlite';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  day TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  purpose TEXT NOT NULL,
  chat_id TEXT,
  prompt_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  total_tokens INTEGER NOT NULL,
  estimated INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  error_code TEXT,
  cost_amount REAL,
  cost_currency TEXT,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS calls_by_day ON calls (day, provider, model, purpose);
CREATE INDEX IF NOT EXISTS calls_by_chat ON calls (chat_id, id) WHERE chat_id IS NOT NULL;
`;

/** A call to write (the ledger assigns the id). */
export type NewUsageRecord = Omit<UsageRecord, 'id'> & { day: string };

interface CallRow {
  id: number;
  cache_write_tokens?: number | null;
  at: string;
  provider: string;
  model: string;
  purpose: string;
  chat_id: string | null;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  estimated: number;
  duration_ms: number;
  outcome: string;
  error_code: string | null;
  cost_amount: number | null;
  cost_currency: string | null;
}

/** One group of the window totals: tokens and priced cost of the calls of a provider, model and purpose. */
export interface UseGroup {
  provider: LlmProvider;
  model: string;
  purpose: ModelCallPurpose;
  tokens: number;
  /** currency → amount */
  money: Map<string, number>;
}

export interface RecordsQuery {
  from: string;
  to: string;
  model?: string;
  purpose?: ModelCallPurpose;
  chatId?: string;
  limit: number;
  before?: number;
}

interface GroupRow {
  day?: string;
  provider?: string;
  model?: string;
  purpose?: string;
  cost_currency: string | null;
  calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number | null;
  completion_tokens: number;
  total_tokens: number;
  estimated_calls: number;
  unpriced_calls: number;
  cost: number | null;
}

const TOTAL_COLUMNS = `cost_currency, COUNT(*) AS calls, SUM(prompt_tokens) AS prompt_tokens, SUM(cached_tokens) AS cached_tokens,
  SUM(cache_write_tokens) AS cache_write_tokens,
  SUM(completion_tokens) AS completion_tokens, SUM(total_tokens) AS total_tokens, SUM(estimated) AS estimated_calls,
  SUM(CASE WHEN cost_currency IS NULL AND outcome <> 'refused' THEN 1 ELSE 0 END) AS unpriced_calls, SUM(cost_amount) AS cost`;

export function emptyTotals(): UsageTotals {
  return {
    calls: 0,
    prompt_tokens: 0,
    cached_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    estimated_calls: 0,
    unpriced_calls: 0,
    cost: [],
  };
}

/** Adds a SQL group (one currency, or none) into totals; amounts per currency are summed. */
function addGroup(totals: UsageTotals, row: GroupRow): void {
  totals.calls += row.calls;
  totals.prompt_tokens += row.prompt_tokens;
  totals.cached_tokens += row.cached_tokens;
  // additive: present once a call wrote to a provider's cache
  if ((row.cache_write_tokens ?? 0) > 0) totals.cache_write_tokens = (totals.cache_write_tokens ?? 0) + (row.cache_write_tokens ?? 0);
  totals.completion_tokens += row.completion_tokens;
  totals.total_tokens += row.total_tokens;
  totals.estimated_calls += row.estimated_calls;
  totals.unpriced_calls += row.unpriced_calls;
  if (row.cost_currency !== null && row.cost !== null) {
    const existing = totals.cost.find((money) => money.currency === row.cost_currency);
    if (existing) existing.amount = roundMoney(existing.amount + row.cost);
    else totals.cost.push({ amount: roundMoney(row.cost), currency: row.cost_currency });
  }
}

/** Money is kept to 1e-9 of a unit: sums of floats otherwise show 0.30000000000000004. */
export function roundMoney(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

function toRecord(row: CallRow): UsageRecord {
  const record: UsageRecord = {
    id: row.id,
    at: row.at,
    provider: row.provider as LlmProvider,
    model: row.model,
    purpose: row.purpose as ModelCallPurpose,
    prompt_tokens: row.prompt_tokens,
    cached_tokens: row.cached_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    estimated: row.estimated === 1,
    duration_ms: row.duration_ms,
    outcome: row.outcome as ModelCallOutcome,
  };
  if (row.chat_id !== null) record.chat_id = row.chat_id;
  if ((row.cache_write_tokens ?? 0) > 0) record.cache_write_tokens = row.cache_write_tokens ?? 0;
  if (row.error_code !== null) record.error_code = row.error_code;
  if (row.cost_amount !== null && row.cost_currency !== null) record.cost = { amount: roundMoney(row.cost_amount), currency: row.cost_currency };
  return record;
}

export class UsageLedger {
  private readonly db: SqliteDatabase;
  private readonly insertStatement: StatementSync;
  private readonly windowStatement: StatementSync;

  constructor(readonly file: string) {
    this.db = openSqlite(file);
    this.db.exec(SCHEMA);
    // a ledger written before cache writes were recorded gets the column (0 for its calls)
    const columns = this.db.prepare('PRAGMA table_info(calls)').all() as unknown as Array<{ name: string }>;
    if (!columns.some((column) => column.name === 'cache_write_tokens')) {
      this.db.exec('ALTER TABLE calls ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0');
    }
    this.insertStatement = this.db.prepare(
      `INSERT INTO calls (at, day, provider, model, purpose, chat_id, prompt_tokens, cached_tokens, completion_tokens,
        total_tokens, estimated, duration_ms, outcome, error_code, cost_amount, cost_currency, cache_write_tokens)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.windowStatement = this.db.prepare(
      `SELECT provider, model, purpose, cost_currency, SUM(total_tokens) AS tokens, SUM(cost_amount) AS cost
       FROM calls WHERE day >= ? AND day <= ? GROUP BY provider, model, purpose, cost_currency`,
    );
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** Writes one call; returns it with its id. */
  insert(call: NewUsageRecord): UsageRecord {
    const result = this.insertStatement.run(
      call.at,
      call.day,
      call.provider,
      call.model,
      call.purpose,
      call.chat_id ?? null,
      call.prompt_tokens,
      call.cached_tokens,
      call.completion_tokens,
      call.total_tokens,
      call.estimated ? 1 : 0,
      Math.max(0, Math.round(call.duration_ms)),
      call.outcome,
      call.error_code ?? null,
      call.cost?.amount ?? null,
      call.cost?.currency ?? null,
      call.cache_write_tokens ?? 0,
    );
    const { day: _day, ...record } = call;
    return { ...record, id: Number(result.lastInsertRowid) };
  }

  /** Tokens and priced cost per (provider, model, purpose) of the calls of the days `from`..`to` (inclusive). */
  windowUse(from: string, to: string): UseGroup[] {
    const rows = this.windowStatement.all(from, to) as unknown as Array<{
      provider: string;
      model: string;
      purpose: string;
      cost_currency: string | null;
      tokens: number;
      cost: number | null;
    }>;
    const groups = new Map<string, UseGroup>();
    for (const row of rows) {
      const key = `${row.provider}\u0000${row.model}\u0000${row.purpose}`;
      let group = groups.get(key);
      if (!group) {
        group = { provider: row.provider as LlmProvider, model: row.model, purpose: row.purpose as ModelCallPurpose, tokens: 0, money: new Map() };
        groups.set(key, group);
      }
      group.tokens += row.tokens;
      if (row.cost_currency !== null && row.cost !== null) {
        group.money.set(row.cost_currency, (group.money.get(row.cost_currency) ?? 0) + row.cost);
      }
    }
    return [...groups.values()];
  }

  /** The (day, provider, model, purpose) groups of `from`..`to` and their totals, grouped in SQL. */
  summary(from: string, to: string): { rows: UsageSummaryRow[]; totals: UsageTotals } {
    const groups = this.db
      .prepare(
        `SELECT day, provider, model, purpose, ${TOTAL_COLUMNS} FROM calls WHERE day >= ? AND day <= ?
         GROUP BY day, provider, model, purpose, cost_currency ORDER BY day, provider, model, purpose`,
      )
      .all(from, to) as unknown as GroupRow[];
    const rows: UsageSummaryRow[] = [];
    const totals = emptyTotals();
    let current: UsageSummaryRow | undefined;
    for (const group of groups) {
      if (!current || current.day !== group.day || current.provider !== group.provider || current.model !== group.model || current.purpose !== group.purpose) {
        current = {
          day: group.day as string,
          provider: group.provider as LlmProvider,
          model: group.model as string,
          purpose: group.purpose as ModelCallPurpose,
          ...emptyTotals(),
        };
        rows.push(current);
      }
      addGroup(current, group);
      addGroup(totals, group);
    }
    return { rows, totals };
  }

  /** The totals of one chat's calls (any day still in the ledger). */
  chatTotals(chatId: string): UsageTotals {
    const groups = this.db
      .prepare(`SELECT ${TOTAL_COLUMNS} FROM calls WHERE chat_id = ? GROUP BY cost_currency`)
      .all(chatId) as unknown as GroupRow[];
    const totals = emptyTotals();
    for (const group of groups) addGroup(totals, group);
    return totals;
  }

  /** Newest first, `limit` per page; `before` continues below that id. */
  records(query: RecordsQuery): UsageRecordsPage {
    const where = ['day >= ?', 'day <= ?'];
    const params: Array<string | number> = [query.from, query.to];
    if (query.model !== undefined) {
      where.push('model = ?');
      params.push(query.model);
    }
    if (query.purpose !== undefined) {
      where.push('purpose = ?');
      params.push(query.purpose);
    }
    if (query.chatId !== undefined) {
      where.push('chat_id = ?');
      params.push(query.chatId);
    }
    if (query.before !== undefined) {
      where.push('id < ?');
      params.push(query.before);
    }
    const rows = this.db
      .prepare(`SELECT * FROM calls WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`)
      .all(...params, query.limit + 1) as unknown as CallRow[];
    const more = rows.length > query.limit;
    const records = rows.slice(0, query.limit).map(toRecord);
    const last = records.at(-1);
    return more && last ? { records, next_before: last.id } : { records };
  }

  /** Every call of `from`..`to`, oldest first, in pages (for the CSV export without holding everything). */
  *iterate(from: string, to: string, pageSize = 1000): Generator<UsageRecord> {
    const statement = this.db.prepare(`SELECT * FROM calls WHERE day >= ? AND day <= ? AND id > ? ORDER BY id LIMIT ?`);
    let after = 0;
    for (;;) {
      const rows = statement.all(from, to, after, pageSize) as unknown as CallRow[];
      for (const row of rows) yield toRecord(row);
      if (rows.length < pageSize) return;
      after = (rows.at(-1) as CallRow).id;
    }
  }

  /** Deletes the calls of days before `firstKeptDay`; returns how many. */
  prune(firstKeptDay: string): number {
    return inTransaction(this.db, () => Number(this.db.prepare('DELETE FROM calls WHERE day < ?').run(firstKeptDay).changes));
  }

  /** Many calls in one transaction (benchmarks and tests seeding a ledger). */
  insertMany(calls: readonly NewUsageRecord[]): void {
    inTransaction(this.db, () => {
      for (const call of calls) this.insert(call);
    });
  }
}

