import { checkSchedule, describeSchedule, nextDue, nextDueTimes, parseIsoWithOffset } from './automation-schedule';

describe('automation schedules', () => {
  it('Scenario: an impossible date is not a date', () => {
    expect(parseIsoWithOffset('2026-02-29T08:00:00+01:00')).toBeNull();
    expect(parseIsoWithOffset('2028-02-29T08:00:00+01:00')).toBe(Date.parse('2028-02-29T07:00:00Z'));
    expect(parseIsoWithOffset('2026-04-31T08:00:00Z')).toBeNull();
    expect(parseIsoWithOffset('2026-04-30T24:00:00Z')).toBeNull();
    expect(parseIsoWithOffset('2026-04-30T08:00:00')).toBeNull();
  });

  it('checks cron expressions, time zones and intervals with their codes', () => {
    expect(checkSchedule({ kind: 'cron', expression: '0 8 * * 1-5', timezone: 'Europe/Berlin' }, 60).ok).toBe(true);
    expect(checkSchedule({ kind: 'cron', expression: '0 8 * *', timezone: 'UTC' }, 60)).toMatchObject({ ok: false, code: 'invalid_schedule' });
    expect(checkSchedule({ kind: 'cron', expression: '0 0 0 8 * * * *', timezone: 'UTC' }, 60)).toMatchObject({ ok: false, code: 'invalid_schedule' });
    expect(checkSchedule({ kind: 'cron', expression: '0 8 * * *', timezone: 'Europe/Atlantis' }, 60)).toMatchObject({ ok: false, code: 'invalid_timezone' });
    expect(checkSchedule({ kind: 'interval', every_seconds: 59 }, 60)).toMatchObject({ ok: false, code: 'invalid_schedule' });
    expect(checkSchedule({ kind: 'interval', every_seconds: 1.5 }, 1)).toMatchObject({ ok: false, code: 'invalid_schedule' });
    expect(checkSchedule({ kind: 'weekly' }, 60)).toMatchObject({ ok: false, code: 'invalid_schedule' });
  });

  it('Scenario: an interval after downtime is due once, not once per missed time', () => {
    const schedule = { kind: 'interval', every_seconds: 60 } as const;
    const anchor = Date.parse('2026-01-01T00:00:00Z');
    // ten minutes and a half later: the next due time is the next whole step, not the ten that passed
    expect(nextDue(schedule, anchor + 630_000, anchor)).toBe(anchor + 660_000);
    expect(nextDue(schedule, anchor - 1, anchor)).toBe(anchor);
  });

  it('computes cron times in their time zone and ends a once schedule', () => {
    const from = Date.parse('2026-07-01T00:00:00Z');
    const times = nextDueTimes({ kind: 'cron', expression: '30 9 * * *', timezone: 'America/New_York' }, from, 3);
    expect(times.map((ms) => new Date(ms).toISOString())).toEqual(['2026-07-01T13:30:00.000Z', '2026-07-02T13:30:00.000Z', '2026-07-03T13:30:00.000Z']);
    expect(nextDueTimes({ kind: 'once', at: '2026-07-02T00:00:00Z' }, from, 5)).toEqual([Date.parse('2026-07-02T00:00:00Z')]);
    expect(nextDue({ kind: 'once', at: '2026-06-30T00:00:00Z' }, from, from)).toBeNull();
  });

  it('describes schedules in words', () => {
    expect(describeSchedule({ kind: 'cron', expression: '0 8 * * 1-5', timezone: 'UTC' })).toBe('At 08:00, Monday through Friday (UTC)');
    expect(describeSchedule({ kind: 'interval', every_seconds: 90 })).toBe('Every 90 seconds');
    expect(describeSchedule({ kind: 'interval', every_seconds: 86_400 })).toBe('Every 1 day');
    expect(describeSchedule({ kind: 'once', at: '2026-05-01T08:00:00+02:00' })).toBe('Once, at 2026-05-01T08:00:00+02:00');
  });
});
