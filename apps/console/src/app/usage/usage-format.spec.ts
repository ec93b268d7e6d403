import type { UsageSummary, UsageSummaryRow } from '@cashcode/contracts';

import {
  addMoney,
  bannerLimit,
  chartCurrency,
  dailyChart,
  daysInRange,
  formatCosts,
  formatLimitAmount,
  formatMoney,
  formatShare,
  isMoney,
  limitAlertKey,
  mergeLimitStatus,
  parseLimitStatus,
} from './usage-format';
import { limitStatus } from './usage-testing';

function row(partial: Partial<UsageSummaryRow>): UsageSummaryRow {
  return {
    day: '2026-12-01',
    provider: 'openai_compatible',
    model: 'gpt-a',
    purpose: 'chat',
    calls: 1,
    prompt_tokens: 0,
    cached_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    estimated_calls: 0,
    unpriced_calls: 0,
    cost: [],
    ...partial,
  };
}

function summary(rows: UsageSummaryRow[], cost: UsageSummary['totals']['cost'] = []): UsageSummary {
  return {
    from: '2026-11-30',
    to: '2026-12-02',
    time_zone: 'UTC',
    rows,
    totals: { ...row({}), calls: rows.length, cost },
  };
}

describe('usage formatting', () => {
  it('Scenario: money is formatted in the console language with Intl', () => {
    expect(formatMoney({ amount: 1.5, currency: 'USD' }, 'en')).toBe('$1.50');
    // small per-answer costs keep up to four decimals instead of reading as zero
    expect(formatMoney({ amount: 0.00123, currency: 'USD' }, 'en')).toBe('$0.0012');
    expect(formatMoney({ amount: 12.345, currency: 'EUR' }, 'en')).toBe('€12.35');
    expect(formatMoney({ amount: 2, currency: 'CNY' }, 'zh-CN')).toBe('¥2.00');
    // a code Intl rejects is written after the number
    expect(formatMoney({ amount: 0.5, currency: 'XY1' }, 'en')).toBe('0.50 XY1');
    expect(formatCosts([{ amount: 1.2, currency: 'USD' }, { amount: 0.4, currency: 'EUR' }], 'en')).toBe('$1.20 + €0.40');
    expect(formatCosts([], 'en')).toBe('');
    expect(formatShare(0.854, 'en')).toBe('85%');
    expect(formatLimitAmount({ unit: 'tokens' }, 12345, 'en')).toBe('12,345');
    expect(formatLimitAmount({ unit: 'money', currency: 'USD' }, 5, 'en')).toBe('$5.00');
  });

  it('accepts only well-formed money and adds the costs of two parts of an answer in one currency', () => {
    expect(isMoney({ amount: 0.1, currency: 'USD' })).toBe(true);
    expect(isMoney({ amount: -1, currency: 'USD' })).toBe(false);
    expect(isMoney({ amount: 1, currency: 'usd' })).toBe(false);
    expect(isMoney({ amount: Number.NaN, currency: 'USD' })).toBe(false);
    expect(isMoney(null)).toBe(false);
    expect(addMoney({ amount: 1, currency: 'USD' }, { amount: 0.5, currency: 'USD' })).toEqual({ amount: 1.5, currency: 'USD' });
    expect(addMoney({ amount: 0.1, currency: 'USD' }, { amount: 0.2, currency: 'USD' })).toEqual({ amount: 0.3, currency: 'USD' });
    // a part without a price or in another currency: the whole is unknown, as the server stores it
    expect(addMoney(undefined, { amount: 0.5, currency: 'USD' })).toBeUndefined();
    expect(addMoney({ amount: 1, currency: 'USD' }, undefined)).toBeUndefined();
    expect(addMoney({ amount: 1, currency: 'USD' }, { amount: 2, currency: 'EUR' })).toBeUndefined();
  });

  it('lists every day of a range', () => {
    expect(daysInRange('2026-11-29', '2026-12-02')).toEqual(['2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
    expect(daysInRange('2026-12-02', '2026-12-01')).toEqual([]);
    expect(daysInRange('nope', '2026-12-01')).toEqual([]);
  });
});

describe('usage charts', () => {
  const rows = [
    row({ day: '2026-11-30', model: 'gpt-a', purpose: 'chat', total_tokens: 100, cost: [{ amount: 0.1, currency: 'USD' }] }),
    row({ day: '2026-11-30', model: 'gpt-a', purpose: 'title', total_tokens: 20, cost: [{ amount: 0.02, currency: 'USD' }] }),
    row({ day: '2026-12-02', model: 'gpt-b', purpose: 'chat', total_tokens: 300, unpriced_calls: 1 }),
    row({ day: '2026-12-02', provider: 'ollama', model: 'gpt-a', purpose: 'dream', total_tokens: 50 }),
    // outside the range: ignored
    row({ day: '2026-11-01', model: 'gpt-a', total_tokens: 999 }),
  ];

  it('Scenario: the daily charts group the summary by model and by purpose', () => {
    const byModel = dailyChart(summary(rows), 'model', 'tokens');
    expect(byModel.days).toEqual(['2026-11-30', '2026-12-01', '2026-12-02']);
    expect(byModel.series.map((s) => [s.key, s.values, s.total])).toEqual([
      ['openai_compatible/gpt-b', [0, 0, 300], 300],
      ['openai_compatible/gpt-a', [120, 0, 0], 120],
      ['ollama/gpt-a', [0, 0, 50], 50],
    ]);
    expect(byModel.series[2]).toMatchObject({ provider: 'ollama', model: 'gpt-a' });
    expect(byModel.max).toBe(350);
    expect(byModel.currency).toBeUndefined();

    const byPurpose = dailyChart(summary(rows), 'purpose', 'tokens');
    expect(byPurpose.series.map((s) => [s.purpose, s.values])).toEqual([
      ['chat', [100, 0, 300]],
      ['dream', [0, 0, 50]],
      ['title', [20, 0, 0]],
    ]);
  });

  it('the cost chart counts the priced calls in the currency with the largest total', () => {
    const priced = summary(rows, [
      { amount: 0.01, currency: 'EUR' },
      { amount: 0.12, currency: 'USD' },
    ]);
    expect(chartCurrency(priced)).toBe('USD');
    const chart = dailyChart(priced, 'purpose', 'cost');
    expect(chart.currency).toBe('USD');
    // unpriced calls drop out of the cost chart
    expect(chart.series.map((s) => [s.purpose, s.values])).toEqual([
      ['chat', [0.1, 0, 0]],
      ['title', [0.02, 0, 0]],
    ]);
    expect(chart.max).toBeCloseTo(0.12);
    expect(chartCurrency(summary(rows))).toBeNull();
  });
});

describe('the spend-limit banner', () => {
  it('Scenario: the banner shows the most pressing limit until it is dismissed', () => {
    const warning = limitStatus({ id: 'day', share: 0.85 });
    const higher = limitStatus({ id: 'model', scope: 'model', model: 'gpt-a', share: 0.95 });
    const reached = limitStatus({ id: 'month', window: 'month', state: 'reached', share: 1, used: 1000 });
    const ok = limitStatus({ id: 'ok', state: 'ok', share: 0.1 });
    expect(bannerLimit([ok], new Set())).toBeNull();
    expect(bannerLimit([warning, higher, ok], new Set())?.id).toBe('model');
    expect(bannerLimit([warning, higher, reached], new Set())?.id).toBe('month');
    const dismissed = new Set([limitAlertKey(reached), limitAlertKey(higher)]);
    expect(bannerLimit([warning, higher, reached], dismissed)?.id).toBe('day');
    // dismissed while warning: shows again once reached, and in the next window
    expect(bannerLimit([{ ...higher, state: 'reached', share: 1 }], dismissed)?.id).toBe('model');
    expect(bannerLimit([{ ...higher, resets_at: '2026-12-04T00:00:00+00:00' }], dismissed)?.id).toBe('model');
  });

  it('takes a limit from an event only when it is well formed, replacing the one with its id', () => {
    expect(parseLimitStatus(limitStatus())).toEqual(limitStatus());
    expect(parseLimitStatus({ ...limitStatus(), state: 'full' })).toBeNull();
    expect(parseLimitStatus({ ...limitStatus(), share: 'much' })).toBeNull();
    expect(parseLimitStatus(undefined)).toBeNull();
    const merged = mergeLimitStatus([limitStatus({ id: 'a' }), limitStatus({ id: 'b' })], limitStatus({ id: 'b', state: 'reached' }));
    expect(merged.map((l) => [l.id, l.state])).toEqual([
      ['a', 'warning'],
      ['b', 'reached'],
    ]);
    expect(mergeLimitStatus([], limitStatus({ id: 'c' })).map((l) => l.id)).toEqual(['c']);
  });
});
