import type { SpendLimitStatus } from '@cashcode/contracts';

/** Test data of the usage specs: a daily token limit at 85 % (warning), with what a test overrides. */
export function limitStatus(partial: Partial<SpendLimitStatus> = {}): SpendLimitStatus {
  return {
    id: 'daily',
    scope: 'global',
    window: 'day',
    unit: 'tokens',
    amount: 1000,
    used: 850,
    reserved: 0,
    share: 0.85,
    state: 'warning',
    resets_at: '2026-12-03T00:00:00+00:00',
    ...partial,
  };
}
