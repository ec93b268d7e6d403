/** Display helpers for tool-call blocks. */
import { isRecord } from '@cashcode/contracts';

function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(truncate(value.replace(/\s+/g, ' '), 40));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return truncate(JSON.stringify(value) ?? '', 40);
}

/**
 * One-line summary of a call's arguments: `key: value, …` for a JSON object, otherwise the text with
 * whitespace collapsed; at most `max` characters. Empty when there are no arguments.
 */
export function summarizeArguments(raw: string, max = 100): string {
  const text = raw.trim();
  if (text === '' || text === '{}') return '';
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) {
      const parts = Object.entries(value).map(([key, entry]) => `${key}: ${formatValue(entry)}`);
      return truncate(parts.join(', '), max);
    }
  } catch {
    // not JSON (e.g. truncated by the server): show it as text
  }
  return truncate(text.replace(/\s+/g, ' '), max);
}

/** Pretty-prints JSON arguments for the expanded view (raw text when it is not JSON). */
export function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** 320 ms · 1.4 s · 2 min 5 s */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${seconds} s`;
}
