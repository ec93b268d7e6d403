/**
 * The local time stamps the API shows (`session_updated.updated_at`, API key dates): ISO-8601 with seconds and the
 * server's UTC offset, so a reader sees the owner's wall clock.
 */

/**
 * Local ISO-8601 with seconds and offset, e.g. 2026-07-26T12:00:00+08:00; with `millis`, 2026-07-26T12:00:00.250+08:00
 * (the approvals' times, which order decisions within a second).
 */
export function localIsoWithOffset(date: Date, options: { millis?: boolean } = {}): string {
  const pad = (value: number, size = 2): string => String(value).padStart(size, '0');
  const millis = options.millis === true ? `.${pad(date.getMilliseconds(), 3)}` : '';
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${millis}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}
