/**
 * The query parameters of `/api/usage/*` (openspec usage "Requirement: Usage REST API"), checked strictly: every bad
 * value is a 422 problem (`invalid_usage_query`) naming the parameter.
 */
import { CHAT_ID_PATTERN, MODEL_CALL_PURPOSES, type ModelCallPurpose, type UsageRecord } from '@cashcode/contracts';
import type { ProblemFieldError } from '../common/problem-details';
import { dayBefore, daysBetween, isCalendarDay, localDay } from './usage-calendar';
import { UsageError } from './usage.errors';
import type { RecordsQuery } from './usage-ledger';

/** the longest range one query may ask for, in days (the default retention) */
export const MAX_RANGE_DAYS = 400;
export const DEFAULT_RANGE_DAYS = 30;
export const DEFAULT_RECORDS_LIMIT = 100;
export const MAX_RECORDS_LIMIT = 1000;

export interface RawRange {
  from?: unknown;
  to?: unknown;
}

function single(value: unknown): unknown {
  return Array.isArray(value) ? (value.length === 1 ? value[0] : value) : value;
}

function fail(errors: ProblemFieldError[]): never {
  throw new UsageError('invalid_usage_query', errors.map((error) => `${error.field}: ${error.message}`).join('; '), errors);
}

/** `from` / `to` (`YYYY-MM-DD`, server-local); default: the last 30 days up to today. */
export function parseRange(raw: RawRange, now: Date): { from: string; to: string } {
  const errors: ProblemFieldError[] = [];
  const read = (name: 'from' | 'to'): string | undefined => {
    const value = single(raw[name]);
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || !isCalendarDay(value)) {
      errors.push({ field: name, message: 'must be a date written YYYY-MM-DD' });
      return undefined;
    }
    return value;
  };
  const fromRaw = read('from');
  const toRaw = read('to');
  if (errors.length > 0) fail(errors);
  const to = toRaw ?? localDay(now);
  const from = fromRaw ?? (toRaw === undefined ? dayBefore(now, DEFAULT_RANGE_DAYS - 1) : to);
  const span = daysBetween(from, to);
  if (span < 0) fail([{ field: 'from', message: 'must not be after to' }]);
  if (span + 1 > MAX_RANGE_DAYS) fail([{ field: 'from', message: `the range may cover at most ${MAX_RANGE_DAYS} days` }]);
  return { from, to };
}

export interface RawRecordsQuery extends RawRange {
  model?: unknown;
  purpose?: unknown;
  chat_id?: unknown;
  limit?: unknown;
  before?: unknown;
}

/** The filters and page of `GET /api/usage/records`. */
export function parseRecordsQuery(raw: RawRecordsQuery, now: Date): RecordsQuery {
  const range = parseRange(raw, now);
  const errors: ProblemFieldError[] = [];
  const query: RecordsQuery = { ...range, limit: DEFAULT_RECORDS_LIMIT };
  const model = single(raw.model);
  if (model !== undefined && model !== '') {
    if (typeof model !== 'string' || model.length > 256) errors.push({ field: 'model', message: 'must be a model id' });
    else query.model = model;
  }
  const purpose = single(raw.purpose);
  if (purpose !== undefined && purpose !== '') {
    if (typeof purpose !== 'string' || !(MODEL_CALL_PURPOSES as readonly string[]).includes(purpose)) {
      errors.push({ field: 'purpose', message: `must be one of ${MODEL_CALL_PURPOSES.join(', ')}` });
    } else query.purpose = purpose as ModelCallPurpose;
  }
  const chatId = single(raw.chat_id);
  if (chatId !== undefined && chatId !== '') {
    if (typeof chatId !== 'string' || !CHAT_ID_PATTERN.test(chatId)) {
      errors.push({ field: 'chat_id', message: 'must be 1 to 64 characters of letters, digits, _, : and -' });
    } else query.chatId = chatId;
  }
  const integer = (name: 'limit' | 'before', min: number, max: number): number | undefined => {
    const value = single(raw[name]);
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || !/^\d{1,16}$/.test(value) || Number(value) < min || Number(value) > max) {
      errors.push({ field: name, message: `must be an integer from ${min} to ${max}` });
      return undefined;
    }
    return Number(value);
  };
  const limit = integer('limit', 1, MAX_RECORDS_LIMIT);
  if (limit !== undefined) query.limit = limit;
  const before = integer('before', 1, Number.MAX_SAFE_INTEGER);
  if (before !== undefined) query.before = before;
  if (errors.length > 0) fail(errors);
  return query;
}

export const CSV_COLUMNS = [
  'id',
  'at',
  'provider',
  'model',
  'purpose',
  'chat_id',
  'prompt_tokens',
  'cached_tokens',
  'completion_tokens',
  'total_tokens',
  'estimated',
  'duration_ms',
  'outcome',
  'error_code',
  'cost',
  'currency',
  'cache_write_tokens',
] as const;

/**
 * One CSV cell (RFC 4180 quoting). A text cell starting with `=`, `+`, `-`, `@`, tab or carriage return gets a leading
 * apostrophe so a spreadsheet shows it as text instead of running it as a formula (model ids and chat ids are user
 * input).
 */
export function csvCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(record: UsageRecord): string {
  return [
    record.id,
    record.at,
    record.provider,
    record.model,
    record.purpose,
    record.chat_id,
    record.prompt_tokens,
    record.cached_tokens,
    record.completion_tokens,
    record.total_tokens,
    record.estimated,
    record.duration_ms,
    record.outcome,
    record.error_code,
    record.cost?.amount,
    record.cost?.currency,
    record.cache_write_tokens ?? 0,
  ]
    .map(csvCell)
    .join(',');
}
