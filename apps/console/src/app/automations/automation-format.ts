/**
 * How the automations page words things: a schedule in the reader's language (cron through `cronstrue`, the same
 * library the server describes schedules with), a run's cost and duration. (Loaded with the page only: the shell's
 * notices use `automation-run.ts`.)
 */
import cronstrue from 'cronstrue';
import 'cronstrue/locales/zh_CN';
import type { AutomationRun, AutomationSchedule } from '@cashcode/contracts';

import type { MessageKey, MessageParams, PluralKey } from '../core/i18n/i18n';
import { formatDueTime } from './automation-time';

export type Translate = (key: MessageKey | PluralKey, params?: MessageParams) => string;

/** The console's language → a cronstrue locale. */
function cronLocale(locale: string): string {
  return locale.toLowerCase().startsWith('zh') ? 'zh_CN' : 'en';
}

/** A cron expression in words ("At 08:00, Monday through Friday"); null when cronstrue cannot read it. */
export function cronWords(expression: string, locale: string): string | null {
  try {
    return cronstrue.toString(expression, { locale: cronLocale(locale), use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch {
    return null;
  }
}

function intervalParts(seconds: number): { n: number; unit: 'days' | 'hours' | 'minutes' | 'seconds' } {
  if (seconds % 86_400 === 0) return { n: seconds / 86_400, unit: 'days' };
  if (seconds % 3_600 === 0) return { n: seconds / 3_600, unit: 'hours' };
  if (seconds % 60 === 0) return { n: seconds / 60, unit: 'minutes' };
  return { n: seconds, unit: 'seconds' };
}

/** A schedule in words, in the reader's language. */
export function scheduleWords(schedule: AutomationSchedule, t: Translate, locale: string): string {
  switch (schedule.kind) {
    case 'cron': {
      const words = cronWords(schedule.expression, locale);
      return t('automations.schedule.cron', { words: words ?? schedule.expression, zone: schedule.timezone });
    }
    case 'interval': {
      const { n, unit } = intervalParts(schedule.every_seconds);
      return t(`automations.schedule.every.${unit}`, { count: n });
    }
    case 'once':
      return t('automations.schedule.once', { at: formatDueTime(schedule.at, locale) });
  }
}

/** A run's cost: `$0.0123`, `$1.50`, or `—` when unknown. */
export function formatCost(cost: number | null, locale: string): string {
  if (cost === null || !Number.isFinite(cost)) return '—';
  // cents hide what small runs cost: four decimals under a dollar
  const digits = Math.abs(cost) < 1 ? 4 : 2;
  return new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: digits }).format(cost);
}

/** How long a run took, `1 min 5 s` style; '' while it runs. */
export function runDuration(run: AutomationRun, t: Translate): string {
  if (run.ended_at === null) return '';
  const ms = Date.parse(run.ended_at) - Date.parse(run.started_at);
  if (!Number.isFinite(ms) || ms < 0) return '';
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return t('automations.duration.seconds', { s: seconds });
  return t('automations.duration.minutes', { m: Math.floor(seconds / 60), s: seconds % 60 });
}
