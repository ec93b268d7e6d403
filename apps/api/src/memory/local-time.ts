/** Local-time formats used by the memory files and the sessions API (openspec memory, sessions). */

const pad = (value: number): string => String(value).padStart(2, '0');

function localDate(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** `YYYY-MM-DD HH:MM` in the server's local timezone (history record `timestamp`, MEMORY.md lines). */
export function formatLocalMinute(date: Date): string {
  return `${localDate(date)} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `YYYY-MM-DDTHH:MM:SS` in local time, no offset (the reference's format; kept for readers of old values). */
export function formatLocalSeconds(date: Date): string {
  return `${localDate(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * `YYYY-MM-DDTHH:MM:SS+HH:MM`: local time with the server's UTC offset at that instant (sessions `updated_at`), so a
 * browser in another time zone reads the same instant (openspec sessions "Requirement: List sessions").
 */
export function formatLocalIsoSeconds(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return `${formatLocalSeconds(date)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
