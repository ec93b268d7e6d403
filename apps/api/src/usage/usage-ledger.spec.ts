import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageLedger, type NewUsageRecord } from './usage-ledger';

function call(overrides: Partial<NewUsageRecord>): NewUsageRecord {
  return {
    at: '2026-03-10T10:00:00+00:00',
    day: '2026-03-10',
    provider: 'openai_compatible',
    model: 'm1',
    purpose: 'chat',
    prompt_tokens: 100,
    cached_tokens: 0,
    completion_tokens: 10,
    total_tokens: 110,
    estimated: false,
    duration_ms: 5,
    outcome: 'ok',
    ...overrides,
  };
}

describe('UsageLedger', () => {
  let dir: string;
  let ledger: UsageLedger;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cashcode-ledger-'));
    ledger = new UsageLedger(join(dir, 'usage', 'ledger.sqlite'));
  });

  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Scenario: summaries group by day, model and purpose in SQL', () => {
    ledger.insertMany([
      call({ cost: { amount: 0.5, currency: 'USD' } }),
      call({ cost: { amount: 0.25, currency: 'USD' }, cached_tokens: 40 }),
      call({ model: 'm2', estimated: true }),
      call({ purpose: 'title', cost: { amount: 1, currency: 'EUR' } }),
      call({ day: '2026-03-11', at: '2026-03-11T09:00:00+00:00' }),
      call({ day: '2026-03-12', at: '2026-03-12T09:00:00+00:00' }),
      call({ outcome: 'refused', error_code: 'spend_limit_reached', prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
    ]);
    const { rows, totals } = ledger.summary('2026-03-10', '2026-03-11');
    expect(rows.map((row) => [row.day, row.model, row.purpose, row.calls])).toEqual([
      ['2026-03-10', 'm1', 'chat', 3],
      ['2026-03-10', 'm1', 'title', 1],
      ['2026-03-10', 'm2', 'chat', 1],
      ['2026-03-11', 'm1', 'chat', 1],
    ]);
    const first = rows[0]!;
    expect(first.cost).toEqual([{ amount: 0.75, currency: 'USD' }]);
    expect(first.cached_tokens).toBe(40);
    // the refused call has no tokens and is not "unpriced"
    expect(first.unpriced_calls).toBe(0);
    expect(first.total_tokens).toBe(220);
    expect(totals.calls).toBe(6);
    expect(totals.estimated_calls).toBe(1);
    expect(totals.unpriced_calls).toBe(2);
    expect(totals.cost).toEqual([
      { amount: 0.75, currency: 'USD' },
      { amount: 1, currency: 'EUR' },
    ]);
  });

  it('Scenario: calls older than the retention are pruned', () => {
    ledger.insertMany([call({ day: '2025-01-01' }), call({ day: '2025-12-31' }), call({ day: '2026-01-01' })]);
    expect(ledger.prune('2025-12-31')).toBe(1);
    expect(ledger.summary('2024-01-01', '2026-12-31').totals.calls).toBe(2);
  });

  it('Scenario: the ledger survives a reopen of its file', () => {
    const first = ledger.insert(call({ chat_id: 'chat-1', cost: { amount: 0.1, currency: 'USD' } }));
    ledger.insert(call({ chat_id: 'chat-1', purpose: 'title' }));
    const before = ledger.chatTotals('chat-1');
    ledger.close();
    ledger = new UsageLedger(join(dir, 'usage', 'ledger.sqlite'));
    expect(ledger.chatTotals('chat-1')).toEqual(before);
    expect(before.calls).toBe(2);
    const page = ledger.records({ from: '2026-03-10', to: '2026-03-10', chatId: 'chat-1', limit: 1 });
    expect(page.records).toHaveLength(1);
    expect(page.next_before).toBe(page.records[0]!.id);
    const next = ledger.records({ from: '2026-03-10', to: '2026-03-10', chatId: 'chat-1', limit: 1, before: page.next_before });
    expect(next.records).toEqual([{ ...first, cost: { amount: 0.1, currency: 'USD' } }]);
    expect(next.next_before).toBeUndefined();
    expect(statSync(join(dir, 'usage', 'ledger.sqlite')).mode & 0o777).toBe(0o600);
  });

  it('windowUse sums tokens and money per provider, model and purpose', () => {
    ledger.insertMany([
      call({ cost: { amount: 1, currency: 'USD' } }),
      call({ cost: { amount: 2, currency: 'EUR' } }),
      call({ day: '2026-04-01' }),
    ]);
    const groups = ledger.windowUse('2026-03-01', '2026-03-31');
    expect(groups).toHaveLength(1);
    expect(groups[0]!.tokens).toBe(220);
    expect(Object.fromEntries(groups[0]!.money)).toEqual({ USD: 1, EUR: 2 });
  });
});
