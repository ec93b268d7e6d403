/**
 * Dates of the automations page in a chosen IANA time zone, with the browser's Intl only: the wall-clock time typed in
 * a zone as ISO 8601 with that zone's offset (what a `once` schedule sends), and back; the zones to pick from; a due
 * time shown in the reader's locale.
 */

const WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

/** The offset of `zone` at the instant `ms`, in minutes east of UTC. */
export function zoneOffsetMinutes(zone: string, ms: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((part) => part.type === type)?.value ?? '0');
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
}

function offsetText(minutes: number): string {
  if (minutes === 0) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * `YYYY-MM-DDTHH:mm` read as a wall-clock time in `zone` → ISO 8601 with the zone's offset then (`…T08:00:00+02:00`);
 * null for a malformed value or an unknown zone. A time skipped by a clock change moves forward with it.
 */
export function zonedIso(wall: string, zone: string): string | null {
  const match = WALL.exec(wall);
  if (!match) return null;
  const [, y, mo, d, h, mi] = match.map(Number) as number[];
  const asUtc = Date.UTC(y!, mo! - 1, d!, h!, mi!);
  try {
    // the offset at the guess, then at the instant it gives (right on both sides of a clock change)
    let offset = zoneOffsetMinutes(zone, asUtc);
    offset = zoneOffsetMinutes(zone, asUtc - offset * 60_000);
    const instant = asUtc - offset * 60_000;
    return `${localDateTimeValue(new Date(instant).toISOString(), zone)}:00${offsetText(zoneOffsetMinutes(zone, instant))}`;
  } catch {
    return null;
  }
}

/** An ISO time as a datetime-local value (`YYYY-MM-DDTHH:mm`) in `zone`; '' when it does not parse. */
export function localDateTimeValue(iso: string, zone: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return '';
  try {
    const shifted = new Date(ms + zoneOffsetMinutes(zone, ms) * 60_000).toISOString();
    return shifted.slice(0, 16);
  } catch {
    return '';
  }
}

/** The browser's own time zone (UTC when it cannot tell). */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The zones to choose from: the runtime's IANA list, with UTC and the ones given (the current choice) included. */
export function timeZoneChoices(...include: string[]): string[] {
  let zones: string[];
  try {
    zones = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    zones = [];
  }
  return [...new Set(['UTC', ...include.filter((zone) => zone !== ''), ...zones])].sort((a, b) => (a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b)));
}

/** A due time in the reader's locale, in `zone` (the reader's own when absent), with the weekday. */
export function formatDueTime(iso: string, locale: string, zone?: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  try {
    return new Intl.DateTimeFormat(locale, {
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      ...(zone ? { timeZone: zone, timeZoneName: 'short' } : {}),
    }).format(new Date(ms));
  } catch {
    return iso;
  }
}
