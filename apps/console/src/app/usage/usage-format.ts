/**
 * Usage, prices and spend limits in the console (openspec console "Requirement: Usage, prices and spend limits"):
 * money and token formatting, the daily chart series and which limit the chat banner shows. Pure functions; the views
 * translate and render them.
 */
import { isRecord } from '@cashcode/contracts';
import type { Money, SpendLimit, SpendLimitStatus, UsageSummary, UsageSummaryRow } from '@cashcode/contracts';

/** A well-formed amount of money (finite, not negative, an ISO 4217-shaped currency). */
export function isMoney(value: unknown): value is Money {
  return (
    isRecord(value) &&
    typeof value['amount'] === 'number' &&
    Number.isFinite(value['amount']) &&
    value['amount'] >= 0 &&
    typeof value['currency'] === 'string' &&
    /^[A-Z]{3}$/.test(value['currency'])
  );
}

/**
 * Money in the console's locale with Intl (`$0.0123`, `¥1.50`): two decimals, up to four below one unit so small
 * per-answer costs do not read as zero. A currency Intl does not know is written as `0.50 XYZ`.
 */
export function formatMoney(money: Money, locale: string): string {
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: Math.abs(money.amount) < 1 ? 4 : 2 };
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency: money.currency, ...digits }).format(money.amount);
  } catch {
    return `${new Intl.NumberFormat(locale, digits).format(money.amount)} ${money.currency}`;
  }
}

/** Costs in several currencies, `$1.20 + €0.40`; '' for none. */
export function formatCosts(costs: readonly Money[], locale: string): string {
  return costs.map((cost) => formatMoney(cost, locale)).join(' + ');
}

/**
 * The cost of two parts of one answer (a stopped answer and its continuation), as the server stores it: their sum when
 * both were priced in one currency, else unknown (the answer shows "no price").
 */
export function addMoney(a: Money | undefined, b: Money | undefined): Money | undefined {
  if (!a || !b || a.currency !== b.currency) return undefined;
  return { amount: Math.round((a.amount + b.amount) * 1e9) / 1e9, currency: a.currency };
}

export function formatCount(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(value);
}

/** A share as a percentage (`85%`); never more precise than whole percents. */
export function formatShare(share: number, locale: string): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 }).format(share);
}

/** An ISO date-time (`resets_at`) as a short local date and time; the text itself when it does not parse. */
export function formatDateTime(iso: string, locale: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(time));
}

/** An amount of a limit's unit: tokens as a count, money in the limit's currency. */
export function formatLimitAmount(limit: Pick<SpendLimit, 'unit' | 'currency'>, value: number, locale: string): string {
  if (limit.unit === 'money' && limit.currency) return formatMoney({ amount: value, currency: limit.currency }, locale);
  return formatCount(value, locale);
}

// ---- the daily charts ---------------------------------------------------------------------------------------

export type ChartGrouping = 'model' | 'purpose';
export type ChartMetric = 'tokens' | 'cost';

export interface ChartSeries {
  key: string;
  /** provider and model, or the purpose (the view translates it) */
  provider?: string;
  model?: string;
  purpose?: string;
  /** one value per day of `days` */
  values: number[];
  total: number;
}

export interface DailyChart {
  days: string[];
  /** largest first */
  series: ChartSeries[];
  /** the tallest day (the stack of all series) */
  max: number;
  /** for `cost`: the currency of the values */
  currency?: string;
}

/** Every `YYYY-MM-DD` from `from` to `to` (inclusive, at most 400 days); none when the range does not parse. */
export function daysInRange(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return [];
  const days: string[] = [];
  for (let time = start; time <= end && days.length < 400; time += 86_400_000) {
    days.push(new Date(time).toISOString().slice(0, 10));
  }
  return days;
}

/** The currency the cost chart shows: the one with the largest total (a chart cannot stack two currencies). */
export function chartCurrency(summary: UsageSummary): string | null {
  const costs = [...summary.totals.cost].sort((a, b) => b.amount - a.amount);
  return costs[0]?.currency ?? null;
}

function rowValue(row: UsageSummaryRow, metric: ChartMetric, currency: string | null): number {
  if (metric === 'tokens') return row.total_tokens;
  return row.cost.find((cost) => cost.currency === currency)?.amount ?? 0;
}

/**
 * The stacked daily series of a summary: one series per provider and model, or per purpose, one value per day of the
 * summary's range (days without calls are 0). `cost` counts the priced calls in the chart currency only.
 */
export function dailyChart(summary: UsageSummary, grouping: ChartGrouping, metric: ChartMetric): DailyChart {
  const days = daysInRange(summary.from, summary.to);
  const dayIndex = new Map(days.map((day, index) => [day, index]));
  const currency = metric === 'cost' ? chartCurrency(summary) : null;
  const byKey = new Map<string, ChartSeries>();
  for (const row of summary.rows) {
    const index = dayIndex.get(row.day);
    if (index === undefined) continue;
    const key = grouping === 'model' ? `${row.provider}/${row.model}` : row.purpose;
    let series = byKey.get(key);
    if (!series) {
      series = { key, values: days.map(() => 0), total: 0 };
      if (grouping === 'model') Object.assign(series, { provider: row.provider, model: row.model });
      else series.purpose = row.purpose;
      byKey.set(key, series);
    }
    const value = rowValue(row, metric, currency);
    series.values[index] += value;
    series.total += value;
  }
  const series = [...byKey.values()].filter((entry) => entry.total > 0).sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
  const max = days.reduce((tallest, _day, index) => Math.max(tallest, series.reduce((sum, entry) => sum + entry.values[index], 0)), 0);
  return currency === null ? { days, series, max } : { days, series, max, currency };
}

// ---- the limits banner --------------------------------------------------------------------------------------

/** A limit's warning as the user dismissed it: the same limit warns again in its next window, or when reached. */
export function limitAlertKey(limit: Pick<SpendLimitStatus, 'id' | 'resets_at' | 'state'>): string {
  return `${limit.id}|${limit.resets_at}|${limit.state}`;
}

/** A limit status as the server sent it (in an event, an error or the status list), else null. */
export function parseLimitStatus(value: unknown): SpendLimitStatus | null {
  if (!isRecord(value)) return null;
  const { id, scope, window, unit, amount, used, share, state, resets_at } = value;
  if (typeof id !== 'string' || typeof resets_at !== 'string') return null;
  if (scope !== 'global' && scope !== 'model' && scope !== 'background') return null;
  if (window !== 'day' && window !== 'month') return null;
  if (unit !== 'tokens' && unit !== 'money') return null;
  if (state !== 'ok' && state !== 'warning' && state !== 'reached') return null;
  if (![amount, used, share].every((n) => typeof n === 'number' && Number.isFinite(n))) return null;
  return value as unknown as SpendLimitStatus;
}

/**
 * The limit the chat banner shows: of the limits in `warning` or `reached` that were not dismissed, a reached one
 * before a warning one, then the one used most. Null when none.
 */
export function bannerLimit(limits: readonly SpendLimitStatus[], dismissed: ReadonlySet<string>): SpendLimitStatus | null {
  const rank = (limit: SpendLimitStatus) => (limit.state === 'reached' ? 1 : 0);
  const candidates = limits
    .filter((limit) => limit.state !== 'ok' && !dismissed.has(limitAlertKey(limit)))
    .sort((a, b) => rank(b) - rank(a) || b.share - a.share);
  return candidates[0] ?? null;
}

/**
 * Merges a limit reported by an event (a `usage_warning`, a refusal) into the known statuses: it replaces the entry
 * with its id, or is added.
 */
export function mergeLimitStatus(limits: readonly SpendLimitStatus[], update: SpendLimitStatus): SpendLimitStatus[] {
  const index = limits.findIndex((limit) => limit.id === update.id);
  if (index < 0) return [...limits, update];
  const next = [...limits];
  next[index] = update;
  return next;
}
