/**
 * The usage ledger's cost per model call (openspec usage): `reserve` (estimate + the limit check) + `settle` (pricing,
 * the SQLite insert, the running totals, `model_call.recorded`) on a real ledger file with three limits and a price
 * table, and the queries over a ledger of 100,000 calls (the summary of 400 days, a page of records, the totals of the
 * current month as loaded after a restart or at a new day).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { AppConfig } from '../apps/api/src/config/app-config';
import { AppEventBus } from '../apps/api/src/events/event-bus';
import { localDay } from '../apps/api/src/usage/usage-calendar';
import { UsageLedger, type NewUsageRecord } from '../apps/api/src/usage/usage-ledger';
import { UsageService, type ModelCallRequest } from '../apps/api/src/usage/usage.service';
import type { Figure } from './server-bench';

const TARGET_MS_PER_CALL = 0.5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function bestMs(run: () => unknown, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

export async function runUsageBench(log: (line: string) => void): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cashcode-usage-bench-'));
  const calls = Number(process.env['CASHCODE_BENCH_USAGE_CALLS'] ?? 5000);
  const figures: Figure[] = [];
  const config = { dataDir: join(dir, 'data'), configDir: join(dir, 'config'), usageRetentionDays: 400, usageDefaultMaxOutputTokens: 4096 } as AppConfig;
  const bus = new AppEventBus(new EventEmitter2());
  let published = 0;
  bus.on('model_call.recorded', () => published++);
  const service = new UsageService(config, bus);
  try {
    await service.onModuleInit();
    await service.setPrices({
      prices: [{ provider: 'openai_compatible', model: 'bench-model', input_per_million: 1, cached_input_per_million: 0.1, output_per_million: 4, currency: 'USD' }],
    });
    await service.setLimits({
      limits: [
        { id: 'day', scope: 'global', window: 'day', unit: 'tokens', amount: 1e15 },
        { id: 'month', scope: 'global', window: 'month', unit: 'money', amount: 1e12, currency: 'USD' },
        { id: 'background', scope: 'background', window: 'day', unit: 'tokens', amount: 1e15 },
      ],
      warn_at: 0.8,
    });
    const request: ModelCallRequest = {
      provider: 'openai_compatible',
      model: 'bench-model',
      purpose: 'chat',
      chatId: 'bench-chat',
      promptChars: 25_000,
    };
    const one = () => {
      const reservation = service.reserve(request);
      service.settle(reservation, {
        outcome: 'ok',
        usage: { prompt_tokens: 6000, completion_tokens: 300, total_tokens: 6300, prompt_tokens_details: { cached_tokens: 4000 } },
      });
    };
    for (let i = 0; i < 500; i++) one();
    const batches: number[] = [];
    const batch = Math.max(1, Math.floor(calls / 10));
    for (let b = 0; b < 10; b++) {
      const start = performance.now();
      for (let i = 0; i < batch; i++) one();
      batches.push((performance.now() - start) / batch);
    }
    const perCall = median(batches);
    log(`usage: reserve + settle + insert ${perCall.toFixed(4)} ms per call (${published} records published)`);
    figures.push({
      name: 'ledger overhead per model call (reserve + settle + insert, 3 limits, priced)',
      value: perCall,
      unit: 'ms',
      target: `<= ${TARGET_MS_PER_CALL} ms`,
      pass: perCall <= TARGET_MS_PER_CALL,
    });
  } finally {
    service.onApplicationShutdown();
  }

  // queries over 100,000 calls spread over 400 days
  const ledger = new UsageLedger(join(dir, 'data', 'usage', 'big.sqlite'));
  try {
    const now = new Date();
    const purposes = ['chat', 'chat', 'chat', 'title', 'consolidation', 'api'] as const;
    const rows: NewUsageRecord[] = [];
    for (let i = 0; i < 100_000; i++) {
      const at = new Date(now.getTime() - (i % 400) * 86_400_000);
      rows.push({
        at: at.toISOString(),
        day: localDay(at),
        provider: 'openai_compatible',
        model: `model-${i % 5}`,
        purpose: purposes[i % purposes.length] as NewUsageRecord['purpose'],
        chat_id: `chat-${i % 300}`,
        prompt_tokens: 1000,
        cached_tokens: 100,
        completion_tokens: 200,
        total_tokens: 1200,
        estimated: i % 17 === 0,
        duration_ms: 800,
        outcome: 'ok',
        ...(i % 5 === 0 ? {} : { cost: { amount: 0.001, currency: 'USD' } }),
      });
    }
    ledger.insertMany(rows);
    const from = localDay(new Date(now.getTime() - 399 * 86_400_000));
    const to = localDay(now);
    const summaryMs = bestMs(() => ledger.summary(from, to));
    const recordsMs = bestMs(() => ledger.records({ from, to, limit: 100, purpose: 'chat' }));
    const monthFrom = `${to.slice(0, 7)}-01`;
    const windowMs = bestMs(() => ledger.windowUse(monthFrom, to));
    log(`usage: 100k calls: summary ${summaryMs.toFixed(1)} ms, records page ${recordsMs.toFixed(2)} ms, month totals ${windowMs.toFixed(2)} ms`);
    figures.push(
      { name: 'summary of 400 days over 100,000 calls', value: summaryMs, unit: 'ms' },
      { name: 'records page (100, one purpose) over 100,000 calls', value: recordsMs, unit: 'ms' },
      { name: 'month totals load (at start or a new day) over 100,000 calls', value: windowMs, unit: 'ms' },
    );
  } finally {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
