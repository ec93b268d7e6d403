import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpendLimit, UsageRecord } from '@cashcode/contracts';
import type { AppConfig } from '../config/app-config';
import type { AppEventBus } from '../events/event-bus';
import { SpendLimitError } from './usage.errors';
import { priceCall, UsageService, type ModelCallRequest } from './usage.service';

const chat = (overrides: Partial<ModelCallRequest> = {}): ModelCallRequest => ({
  provider: 'openai_compatible',
  model: 'm1',
  purpose: 'chat',
  chatId: 'c1',
  promptChars: 400, // 100 tokens
  maxOutputTokens: 100,
  ...overrides,
});

describe('UsageService (spend guard)', () => {
  let dir: string;
  let service: UsageService;
  let recorded: UsageRecord[];
  let clock: Date;

  async function start(): Promise<UsageService> {
    const config = {
      dataDir: join(dir, 'data'),
      configDir: join(dir, 'config'),
      usageRetentionDays: 400,
      usageDefaultMaxOutputTokens: 1000,
    } as AppConfig;
    const bus = { emit: (_name: string, record: UsageRecord) => recorded.push(record) } as unknown as AppEventBus;
    const created = new UsageService(config, bus);
    created.now = () => clock;
    await created.onModuleInit();
    return created;
  }

  async function limits(list: SpendLimit[], warnAt = 0.8): Promise<void> {
    await service.setLimits({ limits: list, warn_at: warnAt });
  }

  /** one call of `tokens` actual total tokens (prompt = tokens - 10, completion 10) */
  function spend(tokens: number, request: Partial<ModelCallRequest> = {}): UsageRecord | null {
    const reservation = service.reserve(chat(request));
    return service.settle(reservation, { outcome: 'ok', usage: { prompt_tokens: tokens - 10, completion_tokens: 10, total_tokens: tokens } });
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cashcode-usage-'));
    recorded = [];
    clock = new Date(2026, 2, 10, 12, 0, 0);
    service = await start();
  });

  afterEach(() => {
    service.onApplicationShutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Scenario: a reserved estimate counts until it is settled with the actual usage', async () => {
    await limits([{ id: 'g', scope: 'global', window: 'day', unit: 'tokens', amount: 300 }]);
    // estimate = 100 prompt + 100 output = 200
    const first = service.reserve(chat());
    expect(service.limitsStatus().limits[0]).toMatchObject({ used: 0, reserved: 200 });
    expect(() => service.reserve(chat({ chatId: 'c2' }))).toThrow(SpendLimitError);
    const refused = recorded.at(-1)!;
    expect(refused).toMatchObject({ outcome: 'refused', error_code: 'spend_limit_reached', total_tokens: 0, chat_id: 'c2' });
    service.settle(first, { outcome: 'ok', usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 } });
    expect(service.limitsStatus().limits[0]).toMatchObject({ used: 50, reserved: 0, state: 'ok' });
    const second = service.reserve(chat({ chatId: 'c2' }));
    expect(service.settle(second, { outcome: 'ok', usage: { prompt_tokens: 40, completion_tokens: 10 } })).toMatchObject({ total_tokens: 50 });
    // settling twice writes nothing
    expect(service.settle(second, { outcome: 'ok' })).toBeNull();
  });

  it("asks a call's own budget after the registered guards and records its refusal", () => {
    const asked: string[] = [];
    const refusal = (code: string) => Object.assign(new Error(code), { code });
    service.addCallGuard({ check: () => (asked.push('registered'), null) });
    const budget = (answer: (Error & { code: string }) | null) => ({
      check: (_request: ModelCallRequest, estimate: { promptTokens: number }) => (asked.push(`budget ${estimate.promptTokens}`), answer),
    });
    expect(service.reserve(chat({ purpose: 'subagent', budget: budget(null) }))).toMatchObject({ promptTokens: 100 });
    expect(() => service.reserve(chat({ purpose: 'subagent', budget: budget(refusal('budget_exceeded')) }))).toThrow('budget_exceeded');
    expect(asked).toEqual(['registered', 'budget 100', 'registered', 'budget 100']);
    expect(recorded.at(-1)).toMatchObject({ purpose: 'subagent', outcome: 'refused', error_code: 'budget_exceeded', total_tokens: 0 });
    // a call without a budget of its own is asked by the registered guards only
    service.reserve(chat());
    expect(asked).toHaveLength(5);
  });

  it('Scenario: a call without reported usage is estimated from the request and answer sizes', () => {
    const reservation = service.reserve(chat({ promptChars: 401 }));
    const record = service.settle(reservation, { outcome: 'ok', usage: null, answerChars: 41 });
    expect(record).toMatchObject({ prompt_tokens: 101, completion_tokens: 11, total_tokens: 112, estimated: true, cached_tokens: 0 });
    expect(recorded).toHaveLength(1);
  });

  it('Scenario: a daily limit resets at local midnight and a monthly one on the 1st', async () => {
    await limits([
      { id: 'd', scope: 'global', window: 'day', unit: 'tokens', amount: 1000 },
      { id: 'm', scope: 'global', window: 'month', unit: 'tokens', amount: 2800 },
    ]);
    spend(900);
    const status = service.limitsStatus().limits;
    expect(status[0]!.resets_at.startsWith('2026-03-11T00:00:00')).toBe(true);
    expect(status[1]!.resets_at.startsWith('2026-04-01T00:00:00')).toBe(true);
    expect(() => service.reserve(chat())).toThrow(/daily token limit "d"/);
    clock = new Date(2026, 2, 11, 0, 0, 1);
    spend(900);
    clock = new Date(2026, 2, 12, 9, 0, 0);
    spend(900);
    // 2700 this month: the monthly limit has no room for an estimate of 200
    clock = new Date(2026, 2, 31, 23, 59, 0);
    expect(() => service.reserve(chat())).toThrow(/monthly token limit "m"/);
    clock = new Date(2026, 3, 1, 0, 0, 0);
    expect(() => service.settle(service.reserve(chat()), { outcome: 'ok' })).not.toThrow();
    // settled without usage: the estimated prompt (100 tokens) and no answer
    expect(service.limitsStatus().limits[1]!.used).toBe(100);
  });

  it('Scenario: a money limit counts only calls priced in its currency', async () => {
    await service.setPrices({
      prices: [
        { provider: 'openai_compatible', model: 'usd', input_per_million: 1000, output_per_million: 1000, currency: 'USD' },
        { provider: 'openai_compatible', model: 'eur', input_per_million: 1000, output_per_million: 1000, currency: 'EUR' },
      ],
    });
    await limits([{ id: 'usd', scope: 'global', window: 'day', unit: 'money', amount: 0.45, currency: 'USD' }]);
    // estimate of a usd call: 200 tokens × 1000 / 1e6 = 0.2 USD
    const usd = spend(300, { model: 'usd' });
    expect(usd?.cost).toEqual({ amount: 0.3, currency: 'USD' });
    for (let i = 0; i < 5; i++) spend(1000, { model: 'eur' });
    spend(100_000, { model: 'unpriced' });
    expect(service.limitsStatus().limits[0]).toMatchObject({ used: 0.3, reserved: 0 });
    expect(() => service.reserve(chat({ model: 'usd' }))).toThrow(SpendLimitError);
    expect(() => service.reserve(chat({ model: 'eur' }))).not.toThrow();
  });

  it('Scenario: a background limit counts Dream, consolidation, evolution and titles only', async () => {
    await limits([{ id: 'bg', scope: 'background', window: 'day', unit: 'tokens', amount: 500 }]);
    spend(400, { purpose: 'dream', chatId: undefined });
    spend(10_000);
    expect(service.limitsStatus().limits[0]!.used).toBe(400);
    for (const purpose of ['consolidation', 'dream', 'title', 'evolution'] as const) {
      expect(() => service.reserve(chat({ purpose }))).toThrow(SpendLimitError);
    }
    expect(() => service.reserve(chat())).not.toThrow();
    expect(() => service.reserve(chat({ purpose: 'api', chatId: undefined }))).not.toThrow();
  });

  it('Scenario: a model limit counts only the calls of its provider and model', async () => {
    await limits([{ id: 'm1', scope: 'model', provider: 'openai_compatible', model: 'm1', window: 'day', unit: 'tokens', amount: 500 }]);
    spend(400);
    spend(5000, { provider: 'ollama' });
    spend(5000, { model: 'm2' });
    expect(service.limitsStatus().limits[0]!.used).toBe(400);
    expect(() => service.reserve(chat())).toThrow(SpendLimitError);
    expect(() => service.reserve(chat({ model: 'm2' }))).not.toThrow();
    expect(() => service.reserve(chat({ provider: 'ollama' }))).not.toThrow();
  });

  it('Scenario: cost is priced per million tokens with the cached input price', async () => {
    const price = { provider: 'openai_compatible' as const, model: 'm1', input_per_million: 2, cached_input_per_million: 0.5, output_per_million: 8, currency: 'USD' };
    expect(priceCall(price, 1_000_000, 400_000, 100_000)).toEqual({ amount: 2.2, currency: 'USD' });
    expect(priceCall({ ...price, cached_input_per_million: undefined }, 1000, 1000, 0)).toEqual({ amount: 0.002, currency: 'USD' });
    await service.setPrices({ prices: [price] });
    const record = service.settle(service.reserve(chat()), {
      outcome: 'ok',
      usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: 600 } },
    });
    expect(record).toMatchObject({ cached_tokens: 600, cost: { amount: 0.0019, currency: 'USD' } });
  });

  it('Scenario: a warning is sent once when a limit passes its warning share', async () => {
    const warnings: string[] = [];
    service.warnings$.subscribe((event) => warnings.push(`${event.chat_id}:${event.limit.id}:${event.limit.state}`));
    await limits([{ id: 'g', scope: 'global', window: 'day', unit: 'tokens', amount: 10_000 }], 0.5);
    spend(4000);
    expect(warnings).toEqual([]);
    spend(1500);
    spend(1000);
    expect(warnings).toEqual(['c1:g:warning']);
    clock = new Date(2026, 2, 11, 8, 0, 0);
    spend(6000);
    expect(warnings).toEqual(['c1:g:warning', 'c1:g:warning']);
  });

  it('Scenario: totals and limits survive a restart', async () => {
    await limits([{ id: 'g', scope: 'global', window: 'month', unit: 'tokens', amount: 1000 }]);
    spend(900);
    service.onApplicationShutdown();
    service = await start();
    expect(service.limits().limits.map((limit) => limit.id)).toEqual(['g']);
    expect(service.limitsStatus().limits[0]!.used).toBe(900);
    expect(() => service.reserve(chat())).toThrow(SpendLimitError);
    expect(statSync(join(dir, 'config', 'settings', 'usage-limits.json')).mode & 0o777).toBe(0o600);
  });
});
