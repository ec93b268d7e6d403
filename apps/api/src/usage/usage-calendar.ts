/**
 * The server-local calendar of the usage ledger (openspec usage): a day is the local `YYYY-MM-DD`, a month the local
 * `YYYY-MM`; a daily limit resets at local midnight, a monthly one at local midnight of the 1st.
 */

const pad = (value: number): string => String(value).padStart(2, '0');

/** The IANA zone of the server's calendar (e.g. `Europe/Berlin`; `UTC` when the runtime does not say). */
export function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Local `YYYY-MM-DD` of a moment. */
export function localDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Local `YYYY-MM` of a moment. */
export function localMonth(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}`;
}

/** Local ISO 8601 with seconds and offset, e.g. `2026-07-26T12:00:00+08:00`. */
export function isoWithOffset(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${localDay(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** When the window containing `now` restarts: the next local midnight, or local midnight of the next month's 1st. */
export function windowResetsAt(window: 'day' | 'month', now: Date): Date {
  return window === 'day'
    ? new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1)
    : new Date(now.getFullYear(), now.getMonth() + 1, 1);
}

/** The first and last local day of the window containing `now` (inclusive, `YYYY-MM-DD`). */
export function windowDays(window: 'day' | 'month', now: Date): { from: string; to: string } {
  if (window === 'day') {
    const day = localDay(now);
    return { from: day, to: day };
  }
  return {
    from: localDay(new Date(now.getFullYear(), now.getMonth(), 1)),
    to: localDay(new Date(now.getFullYear(), now.getMonth() + 1, 0)),
  };
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `text` is a real calendar date written `YYYY-MM-DD`. */
export function isCalendarDay(text: string): boolean {
  const match = DAY_PATTERN.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(year, month - 1, day);
  return date.getFullYear() === year && date.getMonth() === month - 1 && date.getDate() === day;
}

/** Whole days from `from` to `to` (`YYYY-MM-DD`, both valid); 0 for the same day, negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  const [fy, fm, fd] = from.split('-').map(Number) as [number, number, number];
  const [ty, tm, td] = to.split('-').map(Number) as [number, number, number];
  return Math.round((Date.UTC(ty, tm - 1, td) - Date.UTC(fy, fm - 1, fd)) / 86_400_000);
}

/** The local day `days` days before the day of `now`. */
export function dayBefore(now: Date, days: number): string {
  return localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - days));
}
