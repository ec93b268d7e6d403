import type { LogContext } from './log-context';
import { redactSecrets } from './redact';

export type LogFieldValue = string | number | boolean | null | undefined;

const MAX_FIELD_CHARS = 500;

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** `YYYY-MM-DD HH:MM:SS.mmm +HHMM` in the server's local time zone. */
export function formatTimestamp(date: Date): string {
  const offsetMinutes = -date.getTimezoneOffset();
  const sign = offsetMinutes >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)} ` +
    `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`
  );
}

export interface LogRecord {
  timestamp: Date;
  /** rendered level name, e.g. INFO, WARNING */
  level: string;
  /** logger name (Nest context) */
  logger: string;
  context: LogContext;
  message: string;
}

/**
 * One runtime log line (openspec http-platform "Requirement: Access log and runtime log"):
 * `YYYY-MM-DD HH:MM:SS.mmm +HHMM LEVEL    logger request_id=<id|-> chat_id=<id|-> turn_id=<id|-> message`,
 * redacted as a whole. Newlines in the message are kept (tracebacks) but every line is redacted.
 */
export function formatLogLine(record: LogRecord): string {
  const { context } = record;
  const line =
    `${formatTimestamp(record.timestamp)} ${record.level.padEnd(8)} ${record.logger || '-'} ` +
    `request_id=${context.requestId ?? '-'} chat_id=${context.chatId ?? '-'} turn_id=${context.turnId ?? '-'} ` +
    record.message;
  return redactSecrets(line);
}

function formatFieldValue(value: LogFieldValue): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
  // eslint-disable-next-line no-control-regex
  const cleaned = Array.from(value.replace(/[\u0000-\u001f\u007f]/g, ' '))
    .slice(0, MAX_FIELD_CHARS)
    .join('');
  return JSON.stringify(cleaned);
}

/**
 * A structured event message: `event=<name>` then the fields sorted by key; strings JSON-quoted (control chars →
 * space, ≤ 500 chars), booleans `true/false`, numbers raw, null/undefined `-`.
 * Example: `logger.log(formatEvent('tool.execution.completed', { tool: 'list_dir', duration_ms: 3 }))`.
 */
export function formatEvent(name: string, fields: Record<string, LogFieldValue> = {}): string {
  const parts = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${formatFieldValue(fields[key])}`);
  return [`event=${name}`, ...parts].join(' ');
}

/** The `error_type` field of a failure line: the error's class name (never its message, which may hold user data). */
export function errorType(err: unknown): string {
  if (err instanceof Error) return err.name;
  if (typeof err === 'object' && err !== null) return err.constructor?.name ?? 'object';
  return typeof err;
}
