/**
 * Schedules of automations (openspec automations "Requirement: Schedules"): parsing and next due times come from
 * `croner` (cron in an IANA time zone), the human-readable description of a cron expression from `cronstrue`. An
 * interval counts from its last due time; `once` is due at its date and never again.
 * - a cron expression must have five or six fields and run at least once; the time zone must exist;
 * - an interval is a whole number of seconds, at least the configured minimum (60 outside tests);
 * - `once` is an ISO 8601 date-time with an offset (`Z` or `±hh:mm`) naming a real calendar date.
 */
import { Cron } from 'croner';
import cronstrue from 'cronstrue';
import type { AutomationSchedule } from '@cashcode/contracts';
import type { ProblemFieldError } from '../common/problem-details';

/** Longest schedule text accepted (a cron expression or a date). */
const MAX_SCHEDULE_CHARS = 200;
/** An ISO 8601 date-time with seconds optional, fractions optional and a mandatory offset. */
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export type ScheduleCheck =
  | { ok: true; schedule: AutomationSchedule }
  | { ok: false; code: 'invalid_schedule' | 'invalid_timezone'; errors: ProblemFieldError[] };

function fail(code: 'invalid_schedule' | 'invalid_timezone', field: string, message: string): ScheduleCheck {
  return { ok: false, code, errors: [{ field, message }] };
}

/** Whether the IANA time zone exists in this runtime's time zone data. */
export function isKnownTimeZone(zone: string): boolean {
  if (zone.trim() === '' || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, mode: '5-or-6-parts' });
}

/** Checks a schedule as the owner or the model sent it; `field` prefixes the field paths of the errors. */
export function checkSchedule(raw: unknown, minIntervalSec: number, field = 'schedule'): ScheduleCheck {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('invalid_schedule', field, 'must be an object with a kind');
  const record = raw as Record<string, unknown>;
  switch (record['kind']) {
    case 'cron': {
      const expression = record['expression'];
      const timezone = record['timezone'];
      if (typeof expression !== 'string' || expression.trim() === '' || expression.length > MAX_SCHEDULE_CHARS) {
        return fail('invalid_schedule', `${field}.expression`, `must be a cron expression of 1 to ${MAX_SCHEDULE_CHARS} characters`);
      }
      if (typeof timezone !== 'string' || !isKnownTimeZone(timezone)) {
        return fail('invalid_timezone', `${field}.timezone`, `${JSON.stringify(timezone ?? null)} is not a known IANA time zone (e.g. Europe/Berlin, UTC)`);
      }
      let cron: Cron;
      try {
        cron = cronOf(expression.trim(), timezone);
      } catch (err) {
        return fail('invalid_schedule', `${field}.expression`, `not a valid cron expression: ${cronMessage(err)}`);
      }
      if (cron.nextRun() === null) return fail('invalid_schedule', `${field}.expression`, 'the expression never matches a date (e.g. 31 February)');
      return { ok: true, schedule: { kind: 'cron', expression: expression.trim(), timezone } };
    }
    case 'interval': {
      const every = record['every_seconds'];
      if (typeof every !== 'number' || !Number.isInteger(every) || every < minIntervalSec || every > 366 * 86_400) {
        return fail('invalid_schedule', `${field}.every_seconds`, `must be a whole number of seconds from ${minIntervalSec} to ${366 * 86_400}`);
      }
      return { ok: true, schedule: { kind: 'interval', every_seconds: every } };
    }
    case 'once': {
      const at = record['at'];
      if (typeof at !== 'string' || parseIsoWithOffset(at) === null) {
        return fail('invalid_schedule', `${field}.at`, 'must be a real date and time in ISO 8601 with an offset, e.g. 2026-05-01T08:00:00+02:00');
      }
      return { ok: true, schedule: { kind: 'once', at } };
    }
    default:
      return fail('invalid_schedule', `${field}.kind`, "must be 'cron', 'interval' or 'once'");
  }
}

function cronMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  // croner prefixes its class name ("CronPattern: …")
  return text.replace(/^Cron\w*:\s*/, '').slice(0, 200);
}

/** Milliseconds of an ISO 8601 date-time with an offset; null for a malformed text or an impossible date (31 April). */
export function parseIsoWithOffset(text: string): number | null {
  const match = ISO_WITH_OFFSET.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match.map((part) => part ?? '0') as string[];
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  const offset = match[7] as string;
  if (offset !== 'Z') {
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return null;
  }
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The first due time strictly after `afterMs` (null: never again). An interval counts from `anchorMs` (its last due
 * time, or when it was created), skipping the due times that already passed: downtime never queues several runs.
 */
export function nextDue(schedule: AutomationSchedule, afterMs: number, anchorMs: number): number | null {
  switch (schedule.kind) {
    case 'cron': {
      const next = cronOf(schedule.expression, schedule.timezone).nextRun(new Date(afterMs));
      return next ? next.getTime() : null;
    }
    case 'interval': {
      const step = schedule.every_seconds * 1000;
      if (anchorMs > afterMs) return anchorMs;
      return anchorMs + (Math.floor((afterMs - anchorMs) / step) + 1) * step;
    }
    case 'once': {
      const at = parseIsoWithOffset(schedule.at);
      return at !== null && at > afterMs ? at : null;
    }
  }
}

/** The next `count` due times after `fromMs` (fewer when the schedule ends). */
export function nextDueTimes(schedule: AutomationSchedule, fromMs: number, count: number): number[] {
  if (schedule.kind === 'cron') {
    return cronOf(schedule.expression, schedule.timezone)
      .nextRuns(count, new Date(fromMs))
      .map((date) => date.getTime());
  }
  const times: number[] = [];
  let after = fromMs;
  const anchor = schedule.kind === 'interval' ? fromMs + schedule.every_seconds * 1000 : fromMs;
  while (times.length < count) {
    const next = nextDue(schedule, after, anchor);
    if (next === null) break;
    times.push(next);
    after = next;
  }
  return times;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

function intervalWords(seconds: number): string {
  if (seconds % 86_400 === 0) return plural(seconds / 86_400, 'day');
  if (seconds % 3_600 === 0) return plural(seconds / 3_600, 'hour');
  if (seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

/** A human-readable description of a checked schedule, in English. */
export function describeSchedule(schedule: AutomationSchedule): string {
  switch (schedule.kind) {
    case 'cron': {
      let text: string;
      try {
        text = cronstrue.toString(schedule.expression, { use24HourTimeFormat: true, verbose: false });
      } catch {
        text = `Cron "${schedule.expression}"`;
      }
      return `${text} (${schedule.timezone})`;
    }
    case 'interval':
      return `Every ${intervalWords(schedule.every_seconds)}`;
    case 'once':
      return `Once, at ${schedule.at}`;
  }
}
