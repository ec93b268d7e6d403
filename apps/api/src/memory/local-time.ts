/** Local-time formats used by the memory files and the sessions API (openspec memory, sessions). */

const pad = (value: number): string => String(value).padStart(2, '0');

function localDate(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** `YYYY-MM-DD HH:MM` in the server's local timezone (history record `timestamp`, MEMORY.md lines). */
export function formatLocalMinute(date: Date): string {
  return `${localDate(date)} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `YYYY-MM-DDTHH:MM:SS` in local time, no offset (sessions `updated_at`). */
export function formatLocalSeconds(date: Date): string {
  return `${localDate(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
