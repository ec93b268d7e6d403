import { formatDueTime, localDateTimeValue, timeZoneChoices, zonedIso, zoneOffsetMinutes } from './automation-time';

describe('automation times', () => {
  it('Scenario: a once date typed in a time zone is sent with that zone\'s offset', () => {
    expect(zonedIso('2026-07-01T08:00', 'Europe/Berlin')).toBe('2026-07-01T08:00:00+02:00');
    expect(zonedIso('2026-01-15T08:00', 'Europe/Berlin')).toBe('2026-01-15T08:00:00+01:00');
    expect(zonedIso('2026-01-15T08:00', 'America/New_York')).toBe('2026-01-15T08:00:00-05:00');
    expect(zonedIso('2026-01-15T08:00', 'Asia/Kolkata')).toBe('2026-01-15T08:00:00+05:30');
    expect(zonedIso('2026-01-15T08:00', 'UTC')).toBe('2026-01-15T08:00:00Z');
    // a time the clock change skips moves forward with it
    expect(zonedIso('2026-03-29T02:30', 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
    expect(zonedIso('2026-01-15', 'UTC')).toBeNull();
    expect(zonedIso('2026-01-15T08:00', 'Mars/Olympus')).toBeNull();
  });

  it('reads a due time back as the wall-clock time of a zone', () => {
    expect(localDateTimeValue('2026-07-01T06:00:00Z', 'Europe/Berlin')).toBe('2026-07-01T08:00');
    expect(localDateTimeValue('2026-07-01T08:00:00+02:00', 'UTC')).toBe('2026-07-01T06:00');
    expect(localDateTimeValue('not a date', 'UTC')).toBe('');
    expect(zoneOffsetMinutes('Asia/Kolkata', Date.UTC(2026, 0, 1))).toBe(330);
  });

  it('offers UTC first and keeps the current zone in the choices', () => {
    const zones = timeZoneChoices('Europe/Berlin');
    expect(zones[0]).toBe('UTC');
    expect(zones).toContain('Europe/Berlin');
    expect(new Set(zones).size).toBe(zones.length);
  });

  it('shows a due time in the reader\'s locale and the chosen zone', () => {
    expect(formatDueTime('2026-12-07T07:00:00Z', 'en-US', 'UTC')).toBe('Mon, Dec 7, 2026, 07:00 AM UTC');
    expect(formatDueTime('nonsense', 'en-US')).toBe('nonsense');
  });
});
