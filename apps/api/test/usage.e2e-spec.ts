/**
 * Usage ledger, prices and spend limits through the real app against the fake model (openspec usage): records of
 * every model call with the provider's usage (or estimates), prices → cost on done / answers / records, limits
 * crossed mid-conversation and after a tool round, concurrent turns at the edge, a restart on the same directories,
 * a refused background job, the /v1 refusal, warnings, REST validation and the CSV export.
 */
import { promises as fs, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  PublicMessage,
  ServerEvent,
  SpendLimitsStatus,
  SpendLimitSettings,
  UsageRecord,
  UsageRecordsPage,
} from '@cashcode/contracts';
import { TITLE_SYSTEM_PROMPT } from '../src/chat/chat-title';
import { MODEL_CALL_RECORDED_EVENT } from '../src/events/app-events';
import { AppEventBus } from '../src/events/event-bus';
import { UsageService } from '../src/usage/usage.service';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

type EventOf<N extends ServerEvent['event']> = Extract<ServerEvent, { event: N }>;
const isTitleRequest = (r: RecordedRequest) =>
  (r.body as { messages?: Array<{ content: string }> }).messages?.[0]?.content === TITLE_SYSTEM_PROMPT;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

describe('usage ledger, prices and spend limits', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashcode-usage-data-'));
  const configDir = mkdtempSync(join(tmpdir(), 'cashcode-usage-config-'));
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `usage-chat-${++counter}`;

  const start = (env: Record<string, string> = {}) =>
    startTestApp({ dataDir, configDir, env: { CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS: '100', ...env } });

  async function api<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T; type: string }> {
    const response = await fetch(`${t.httpUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    });
    const type = response.headers.get('content-type') ?? '';
    const text = await response.text();
    return { status: response.status, type, body: (type.includes('json') ? JSON.parse(text) : text) as T };
  }

  const put = <T>(path: string, body: unknown) => api<T>(path, { method: 'PUT', body: JSON.stringify(body) });
  const status = async () => (await api<SpendLimitsStatus>('/api/usage/limits/status')).body;
  const chatRecords = async (chatId: string) =>
    (await api<UsageRecordsPage>(`/api/usage/records?chat_id=${chatId}`)).body.records;

  /** A global daily token limit leaving `room` tokens above what was used today. */
  async function limitWithRoom(room: number, id = 'edge'): Promise<number> {
    await put('/api/usage/limits', { limits: [{ id, scope: 'global', window: 'day', unit: 'tokens', amount: 1e12 }] });
    const used = (await status()).limits[0]!.used;
    const saved = await put('/api/usage/limits', { limits: [{ id, scope: 'global', window: 'day', unit: 'tokens', amount: used + room }] });
    expect(saved.status).toBe(200);
    return used;
  }

  /** Sends a message and resolves with the chat's events up to its done or error. */
  async function turn(chatId: string, content: string): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    client.sendMessage(chatId, content);
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  const messages = async (chatId: string) =>
    (await api<{ messages: PublicMessage[] }>(`/api/sessions/${chatId}/messages`)).body.messages;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await start();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(configDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
    await put('/api/usage/limits', { limits: [] });
  });

  it('Scenario: every model call of a turn is recorded with the provider\'s usage', async () => {
    const published: UsageRecord[] = [];
    const off = t.app.get(AppEventBus).on(MODEL_CALL_RECORDED_EVENT, (record) => published.push(record));
    const chatId = newChatId();
    fake.enqueue({
      toolCalls: [{ name: 'no_such_tool', arguments: '{}' }],
      usage: { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, prompt_tokens_details: { cached_tokens: 100 } },
    });
    fake.enqueue({ content: 'All done.', usage: { prompt_tokens: 140, completion_tokens: 3, total_tokens: 143 } });
    const events = await turn(chatId, 'Use a tool, then answer');
    off();
    expect(events.at(-1)).toMatchObject({ event: 'done', usage: { prompt_tokens: 260, completion_tokens: 10, total_tokens: 270 } });
    expect((events.at(-1) as EventOf<'done'>).cost).toBeUndefined();
    const records = await chatRecords(chatId);
    expect(records.map((r) => [r.purpose, r.outcome, r.prompt_tokens, r.cached_tokens, r.completion_tokens, r.total_tokens, r.estimated])).toEqual([
      ['chat', 'ok', 140, 0, 3, 143, false],
      ['chat', 'ok', 120, 100, 7, 127, false],
    ]);
    expect(records.every((r) => r.provider === 'openai_compatible' && r.model === 'fake-model' && r.cost === undefined)).toBe(true);
    expect(published.filter((r) => r.chat_id === chatId).map((r) => r.id)).toEqual(records.map((r) => r.id).reverse());
    const summary = (await api<{ totals: { unpriced_calls: number; calls: number } }>('/api/usage/summary')).body;
    expect(summary.totals.unpriced_calls).toBeGreaterThanOrEqual(2);
  });

  it('Scenario: failed and cancelled calls are recorded with their outcome', async () => {
    const failed = newChatId();
    fake.enqueue({ status: 401, errorBody: { error: { message: 'bad key', code: 'invalid_api_key' } } });
    expect((await turn(failed, 'Who am I?')).at(-1)).toMatchObject({ event: 'error', code: 'auth' });
    expect(await chatRecords(failed)).toEqual([expect.objectContaining({ outcome: 'error', error_code: 'auth', estimated: true })]);

    const cancelled = newChatId();
    fake.enqueue({ chunks: ['partial ', 'answer'], hangAfterChunks: true });
    const done = client.next('done', (e) => e.chat_id === cancelled);
    client.sendMessage(cancelled, 'Tell me a long story');
    await client.waitForText(cancelled, 'partial answer');
    client.send({ type: 'cancel', chat_id: cancelled });
    expect(await done).toMatchObject({ cancelled: true });
    const [record] = await chatRecords(cancelled);
    expect(record).toMatchObject({ outcome: 'cancelled', estimated: true, completion_tokens: Math.ceil('partial answer'.length / 4) });
  });

  it('Scenario: a provider without usage gives estimated records', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'An answer of forty characters, roughly!!', omitUsage: true });
    const events = await turn(chatId, 'No usage please');
    expect(events.at(-1)).toMatchObject({ event: 'done' });
    const [record] = await chatRecords(chatId);
    expect(record).toMatchObject({ estimated: true, outcome: 'ok', completion_tokens: 10, cached_tokens: 0 });
    expect(record!.prompt_tokens).toBeGreaterThan(10);
    expect(record!.total_tokens).toBe(record!.prompt_tokens + 10);
  });

  it('Scenario: prices give the cost on done, on the answer and in the records', async () => {
    const saved = await put('/api/usage/prices', {
      prices: [{ provider: 'openai_compatible', model: 'fake-model', input_per_million: 1, output_per_million: 2, currency: 'USD' }],
    });
    expect(saved.status).toBe(200);
    try {
      const chatId = newChatId();
      fake.enqueue({ content: 'Priced.', usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } });
      const events = await turn(chatId, 'What does it cost?');
      expect(events.at(-1)).toMatchObject({ event: 'done', cost: { amount: 0.002, currency: 'USD' } });
      const answer = (await messages(chatId)).find((m) => m.role === 'assistant');
      expect(answer?.cost).toEqual({ amount: 0.002, currency: 'USD' });
      expect((await chatRecords(chatId))[0]?.cost).toEqual({ amount: 0.002, currency: 'USD' });
      const usage = (await api<{ totals: { cost: unknown[]; calls: number } }>(`/api/usage/chats/${chatId}`)).body;
      expect(usage.totals).toMatchObject({ calls: 1, cost: [{ amount: 0.002, currency: 'USD' }] });
    } finally {
      await put('/api/usage/prices', { prices: [] });
    }
  });

  it('Scenario: a limit crossed mid-conversation refuses the next turn with a clear error', async () => {
    const chatId = newChatId();
    // room for the first turn's estimate, then its reported usage leaves less than any call's estimate
    const used = await limitWithRoom(40_000);
    fake.enqueue({ content: 'First answer.', usage: { prompt_tokens: 39_900, completion_tokens: 50, total_tokens: 39_950 } });
    expect((await turn(chatId, 'First question')).at(-1)).toMatchObject({ event: 'done' });
    const requestsBefore = fake.completions.length;
    const events = await turn(chatId, 'Second question');
    expect(events.map((e) => e.event)).toEqual(['error']);
    const error = events[0] as EventOf<'error'>;
    expect(error).toMatchObject({ code: 'spend_limit_reached', chat_id: chatId, limit: { id: 'edge', used: used + 39_950, amount: used + 40_000 } });
    expect(error.limit?.resets_at).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00[+-]\d{2}:\d{2}$/);
    expect(error.detail).toContain('"edge"');
    expect(error.detail).toContain('resets at');
    expect(fake.completions.length).toBe(requestsBefore);
    const rows = await messages(chatId);
    expect(rows.map((m) => [m.role, m.content, m.error?.kind])).toEqual([
      ['user', 'First question', undefined],
      ['assistant', 'First answer.', undefined],
      ['user', 'Second question', 'spend_limit_reached'],
    ]);
    expect((await chatRecords(chatId))[0]).toMatchObject({ outcome: 'refused', error_code: 'spend_limit_reached', total_tokens: 0 });
  });

  it('Scenario: a refusal after a tool round ends the turn cleanly', async () => {
    const chatId = newChatId();
    // room for the first call's estimate (system prompt and tool schemas), not for a second call after its usage
    await limitWithRoom(40_000);
    fake.enqueue({ toolCalls: [{ name: 'no_such_tool', arguments: '{}' }], usage: { prompt_tokens: 39_950, completion_tokens: 45, total_tokens: 39_995 } });
    const events = await turn(chatId, 'Use a tool');
    const names = events.map((e) => e.event);
    expect(names.slice(-3)).toEqual(['tool_call', 'tool_result', 'error']);
    expect(names).not.toContain('done');
    expect(events.at(-1)).toMatchObject({ code: 'spend_limit_reached' });
    expect(fake.completions).toHaveLength(1);
    expect((await messages(chatId)).map((m) => [m.role, m.error?.kind, m.tools])).toEqual([['user', 'spend_limit_reached', undefined]]);
  });

  it('Scenario: concurrent turns at the edge of a limit cannot both pass', async () => {
    // measure one call's reservation while it is in flight
    await limitWithRoom(1e9, 'probe');
    const probe = newChatId();
    fake.enqueue({ content: 'probe', delayMs: 400, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    const probeDone = turn(probe, 'Same question');
    await fake.waitForRequests(1);
    const reserved = (await status()).limits[0]!.reserved;
    await probeDone;
    expect(reserved).toBeGreaterThan(100);
    await limitWithRoom(Math.round(reserved * 1.5));

    fake.setHandler(() => ({ content: 'edge answer', delayMs: 1000, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    const [a, b] = [newChatId(), newChatId()];
    const results = await Promise.all([turn(a, 'Same question'), turn(b, 'Same question')]);
    const ends = results.map((events) => events.at(-1)?.event).sort();
    expect(ends).toEqual(['done', 'error']);
    expect(results.flat().find((e) => e.event === 'error')).toMatchObject({ code: 'spend_limit_reached' });
    expect(fake.completions).toHaveLength(2); // the probe and the one that passed
  });

  it('Scenario: a stateless /v1 request refused by a limit gets an OpenAI-style 429', async () => {
    expect((await put('/api/settings/openai-compat', { enabled: true, default_model: { provider: 'openai_compatible', model: 'fake-model' } })).status).toBe(200);
    const created = await api<{ secret: string }>('/api/settings/openai-compat/keys', { method: 'POST', body: JSON.stringify({ name: 'usage' }) });
    await put('/api/usage/limits', { limits: [{ id: 'none', scope: 'global', window: 'month', unit: 'tokens', amount: 0 }] });
    const response = await fetch(`${t.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${created.body.secret}` },
      body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await response.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      code: 'spend_limit_reached',
      type: 'rate_limit_error',
    });
    expect(fake.completions).toHaveLength(0);
    await put('/api/usage/limits', { limits: [] });
    fake.enqueue({ content: 'api answer', usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } });
    const ok = await fetch(`${t.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${created.body.secret}` },
      body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(ok.status).toBe(200);
    const [record] = (await api<UsageRecordsPage>('/api/usage/records?purpose=api&limit=1')).body.records;
    expect(record).toMatchObject({ purpose: 'api', total_tokens: 13, outcome: 'ok' });
    expect(record!.chat_id).toBeUndefined();
  });

  it('Scenario: a warning is sent once when a limit passes its warning share', async () => {
    const chatId = newChatId();
    const used = await limitWithRoom(10_000, 'warn');
    await put('/api/usage/limits', { limits: [{ id: 'warn', scope: 'global', window: 'day', unit: 'tokens', amount: used + 10_000 }], warn_at: 0.5 });
    // the share is of the whole amount: push the use past half of it
    const push = Math.max(0, Math.ceil((used + 10_000) * 0.5 - used)) + 10;
    fake.enqueue({ content: 'one', usage: { prompt_tokens: push, completion_tokens: 0, total_tokens: push } });
    fake.enqueue({ content: 'two', usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 } });
    await turn(chatId, 'one');
    await turn(chatId, 'two');
    const warnings = client.chatEvents(chatId).filter((e): e is EventOf<'usage_warning'> => e.event === 'usage_warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.limit).toMatchObject({ id: 'warn', state: 'warning' });
  });

  it('Scenario: bad usage queries and settings are 422 problems', async () => {
    const limits = { limits: [{ id: 'keep', scope: 'global', window: 'month', unit: 'tokens', amount: 1e12 }], warn_at: 0.8 };
    await put('/api/usage/limits', limits);
    for (const [path, field] of [
      ['/api/usage/summary?from=2026-02-30', 'from'],
      ['/api/usage/summary?from=2026-03-10&to=2026-03-01', 'from'],
      ['/api/usage/summary?from=2020-01-01&to=2026-01-01', 'from'],
      ['/api/usage/records?purpose=gossip', 'purpose'],
      ['/api/usage/records?limit=0', 'limit'],
      ['/api/usage/export.csv?to=yesterday', 'to'],
      ['/api/usage/chats/bad%20id', 'chat_id'],
    ] as const) {
      const response = await api<{ code: string; errors: Array<{ field: string }> }>(path);
      expect([path, response.status, response.type.split(';')[0], response.body.code]).toEqual([
        path,
        422,
        'application/problem+json',
        'invalid_usage_query',
      ]);
      expect(response.body.errors.map((e) => e.field)).toContain(field);
    }
    const badLimits = await put<{ code: string; errors: Array<{ field: string }> }>('/api/usage/limits', {
      limits: [{ id: 'x', scope: 'model', window: 'day', unit: 'money', amount: -1 }],
      warn_at: 2,
    });
    expect(badLimits.status).toBe(422);
    expect(badLimits.body.code).toBe('invalid_usage_settings');
    expect(badLimits.body.errors.map((e) => e.field).sort()).toEqual(
      ['limits[0].amount', 'limits[0].currency', 'limits[0].model', 'limits[0].provider', 'warn_at'].sort(),
    );
    const badPrices = await put<{ code: string }>('/api/usage/prices', { prices: [{ provider: 'openai_compatible', model: 'm', input_per_million: 1, output_per_million: 1, currency: 'dollars' }] });
    expect([badPrices.status, badPrices.body.code]).toEqual([422, 'invalid_usage_settings']);
    expect((await api<SpendLimitSettings>('/api/usage/limits')).body).toEqual(limits);
    expect((await api<{ prices: unknown[] }>('/api/usage/prices')).body).toEqual({ prices: [] });
  });

  it('documents every usage route in OpenAPI with problem+json errors', async () => {
    const doc = (await api<{ paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> }>('/api/docs-json')).body;
    for (const [path, method] of [
      ['/api/usage/summary', 'get'],
      ['/api/usage/records', 'get'],
      ['/api/usage/export.csv', 'get'],
      ['/api/usage/chats/{chat_id}', 'get'],
      ['/api/usage/prices', 'put'],
      ['/api/usage/limits', 'put'],
      ['/api/usage/limits/status', 'get'],
    ] as const) {
      const responses = doc.paths[path]?.[method]?.responses ?? {};
      expect([path, Object.keys(responses)]).toEqual([path, expect.arrayContaining(['200', '401', '403'])]);
      if (method === 'put' || path !== '/api/usage/limits/status') {
        expect(responses['422']?.content).toHaveProperty('application/problem+json');
      }
    }
  });

  it('Scenario: the CSV export quotes cells and neutralises formulas', async () => {
    const usage = t.app.get(UsageService);
    const model = '=HYPERLINK("http://x"),1';
    usage.settle(usage.reserve({ provider: 'ollama', model, purpose: 'connection_test', promptChars: 40 }), {
      outcome: 'ok',
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    const response = await api<string>('/api/usage/export.csv');
    expect(response.status).toBe(200);
    expect(response.type).toMatch(/^text\/csv/);
    const lines = response.body.split('\r\n');
    expect(lines[0]).toBe('id,at,provider,model,purpose,chat_id,prompt_tokens,cached_tokens,completion_tokens,total_tokens,estimated,duration_ms,outcome,error_code,cost,currency,cache_write_tokens');
    const line = lines.find((l) => l.includes('HYPERLINK'));
    expect(line).toContain(`,ollama,"'=HYPERLINK(""http://x""),1",connection_test,,3,0,1,4,false,`);
  });

  it('Scenario: prices and limits are stored owner-only next to the settings', async () => {
    await put('/api/usage/prices', { prices: [{ provider: 'ollama', model: 'llama3', input_per_million: 0, output_per_million: 0, currency: 'EUR' }] });
    await put('/api/usage/limits', { limits: [] });
    for (const file of [join(configDir, 'settings', 'usage-prices.json'), join(configDir, 'settings', 'usage-limits.json'), join(dataDir, 'usage', 'ledger.sqlite')]) {
      expect(((await fs.stat(file)).mode & 0o777).toString(8)).toBe('600');
    }
    await put('/api/usage/prices', { prices: [] });
  });

  describe('after a restart', () => {
    it('Scenario: totals and limits survive a restart', async () => {
      await put('/api/usage/limits', { limits: [{ id: 'month', scope: 'global', window: 'month', unit: 'tokens', amount: 1e12 }] });
      const used = (await status()).limits[0]!.used;
      const limits = { limits: [{ id: 'month', scope: 'global', window: 'month', unit: 'tokens', amount: used + 50 }], warn_at: 0.9 };
      await put('/api/usage/limits', limits);
      const records = (await api<UsageRecordsPage>('/api/usage/records?limit=1000')).body.records;
      await client.close();
      await t.close();
      t = await start({ CASHCODE_MODEL_TITLES: 'true' });
      client = await WsTestClient.connect(t.wsUrl);
      expect((await api<SpendLimitSettings>('/api/usage/limits')).body).toEqual(limits);
      expect((await api<UsageRecordsPage>('/api/usage/records?limit=1000')).body.records).toEqual(records);
      expect((await status()).limits[0]).toMatchObject({ used, reserved: 0 });
      const events = await turn(newChatId(), 'Over the limit');
      expect(events.at(-1)).toMatchObject({ event: 'error', code: 'spend_limit_reached', limit: { id: 'month', used } });
      expect(fake.completions).toHaveLength(0);
    });

    it('Scenario: a background job under a background limit is skipped and recorded refused', async () => {
      await put('/api/usage/limits', { limits: [{ id: 'bg', scope: 'background', window: 'day', unit: 'tokens', amount: 0 }] });
      fake.setHandler((r) => (isTitleRequest(r) ? { content: 'Model title' } : { content: 'Answered.' }));
      const chatId = newChatId();
      const events = await turn(chatId, 'A new chat that would get a model title');
      expect(events.at(-1)).toMatchObject({ event: 'done' });
      const refused = await until(async () => {
        const records = await chatRecords(chatId);
        return records.find((r) => r.purpose === 'title');
      });
      expect(refused).toMatchObject({ outcome: 'refused', error_code: 'spend_limit_reached', total_tokens: 0 });
      expect(fake.completions.filter(isTitleRequest)).toHaveLength(0);
      const sessions = (await api<{ sessions: Array<{ chat_id: string; title: string }> }>('/api/sessions')).body.sessions;
      expect(sessions.find((s) => s.chat_id === chatId)?.title).toBe('A new chat that would get a model title'.slice(0, 40));
    });
  });
});
