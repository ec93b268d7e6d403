/**
 * `GET /metrics` (openspec metrics) against the real app: turns through the WebSocket gateway and the fake model (a
 * tool call that asks for approval, a read-only one, a failed turn), a real stdio MCP server, real WebSocket
 * connections; then the Prometheus text is scraped over HTTP and read with a small line parser.
 */
import type { UsageRecord } from '@cashcode/contracts';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { MODEL_CALL_RECORDED_EVENT } from '../src/events/app-events';
import { AppEventBus } from '../src/events/event-bus';
import { FakeModelServer } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { parsePrometheusText, sampleValue, type Sample } from './support/prometheus-text';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const TOKEN = 'metrics-test-token-0123456789abcdef';

async function scrape(t: TestApp, token?: string): Promise<Sample[]> {
  const req = request(t.httpUrl).get('/metrics');
  if (token) req.set('Authorization', `Bearer ${token}`);
  const res = await req.expect(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  return parsePrometheusText(res.text);
}

/** Scrapes until `check` holds (the server sees a WebSocket close a moment after the client does). */
async function scrapeUntil(t: TestApp, check: (samples: Sample[]) => boolean): Promise<Sample[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const samples = await scrape(t);
    if (check(samples) || Date.now() > deadline) return samples;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('metrics (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let catalogDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    fake = await FakeModelServer.start();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-metrics-catalog-'));
    const catalog = writeCatalog(catalogDir, {
      stdio: stdioEntry(),
      broken: { type: 'stdio', command: 'cashcode-no-such-command-xyz', args: [] },
    });
    t = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    if (catalogDir) await fs.rm(catalogDir, { recursive: true, force: true });
  });

  it('Scenario: a turn with an approved tool call moves the turn, tool, approval and latency metrics', async () => {
    const before = await scrape(t);
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      const chatId = 'metrics-chat-approved';
      fake.enqueue(
        {
          toolCalls: [
            { id: 'm1', name: 'exec', arguments: JSON.stringify({ command: 'echo metrics' }) },
            { id: 'm2', name: 'list_dir', arguments: JSON.stringify({ path: '.' }) },
          ],
        },
        { content: 'All done.' },
      );
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'run it, my secret words');
      const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId && e.call_id === 'm1');
      client.send({ type: 'approval', chat_id: chatId, call_id: asked.call_id, decision: 'allow_once' });
      await done;

      const after = await scrape(t);
      const delta = (name: string, labels: Record<string, string> = {}) =>
        sampleValue(after, name, labels) - sampleValue(before, name, labels);
      expect(delta('cashcode_turns_total', { outcome: 'ok' })).toBe(1);
      expect(delta('cashcode_turn_duration_seconds_count', { outcome: 'ok' })).toBe(1);
      expect(delta('cashcode_turn_duration_seconds_bucket', { outcome: 'ok', le: '+Inf' })).toBe(1);
      expect(delta('cashcode_tool_calls_total', { tool: 'exec', outcome: 'ok' })).toBe(1);
      expect(delta('cashcode_tool_calls_total', { tool: 'list_dir', outcome: 'ok' })).toBe(1);
      expect(delta('cashcode_approval_decisions_total', { decision: 'allow_once', by: 'user' })).toBe(1);
      // the turn's two model calls (the tool round and the answer), as the usage ledger recorded them
      const chatCalls = (samples: readonly Sample[]) =>
        samples
          .filter((s) => s.name === 'cashcode_model_calls_total' && s.labels['purpose'] === 'chat' && s.labels['outcome'] === 'ok')
          .reduce((sum, s) => sum + s.value, 0);
      expect(chatCalls(after) - chatCalls(before)).toBe(2);

      // neither the chat id nor anything the user or the model wrote is a label value
      const text = (await request(t.httpUrl).get('/metrics').expect(200)).text;
      for (const secret of [chatId, 'secret words', 'echo metrics', 'All done', 'm1']) expect(text).not.toContain(secret);
    } finally {
      await client.close();
    }
  });

  it('Scenario: a failed turn is counted with its error code', async () => {
    const before = await scrape(t);
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      const chatId = 'metrics-chat-failed';
      fake.enqueue({ status: 401 });
      const error = client.next('error', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'this fails');
      expect(await error).toMatchObject({ code: 'auth' });
      const after = await scrape(t);
      const labels = { outcome: 'error', code: 'auth' };
      expect(sampleValue(after, 'cashcode_turns_total', labels) - sampleValue(before, 'cashcode_turns_total', labels)).toBe(1);
      expect(sampleValue(after, 'cashcode_turns_total', { outcome: 'ok' })).toBe(sampleValue(before, 'cashcode_turns_total', { outcome: 'ok' }));
    } finally {
      await client.close();
    }
  });

  it('Scenario: the model-call metrics follow model_call.recorded', async () => {
    // The event is published here through the app's real event bus, with a model name no real call of this suite uses,
    // so the exact values (error outcome, bucket edges) can be asserted; the turn scenario above checks that the usage
    // ledger's own records of real model calls reach the same counters.
    const bus = t.app.get(AppEventBus);
    const record: UsageRecord = {
      id: 1,
      at: new Date().toISOString(),
      provider: 'openai_compatible',
      model: 'metrics-recorded-model',
      purpose: 'chat',
      chat_id: 'metrics-chat-usage',
      prompt_tokens: 200,
      cached_tokens: 50,
      completion_tokens: 40,
      total_tokens: 240,
      estimated: false,
      duration_ms: 1_200,
      outcome: 'ok',
    };
    bus.emit(MODEL_CALL_RECORDED_EVENT, record);
    bus.emit(MODEL_CALL_RECORDED_EVENT, { ...record, id: 2, purpose: 'title', prompt_tokens: 10, cached_tokens: 0, completion_tokens: 5, duration_ms: 300 });
    const samples = await scrape(t);
    const chat = { provider: 'openai_compatible', model: 'metrics-recorded-model', purpose: 'chat', outcome: 'ok' };
    const title = { ...chat, purpose: 'title' };
    expect(sampleValue(samples, 'cashcode_model_calls_total', chat)).toBe(1);
    expect(sampleValue(samples, 'cashcode_model_calls_total', title)).toBe(1);
    expect(sampleValue(samples, 'cashcode_model_tokens_total', { ...chat, type: 'prompt' })).toBe(200);
    expect(sampleValue(samples, 'cashcode_model_tokens_total', { ...chat, type: 'cached' })).toBe(50);
    expect(sampleValue(samples, 'cashcode_model_tokens_total', { ...chat, type: 'completion' })).toBe(40);
    expect(sampleValue(samples, 'cashcode_model_call_duration_seconds_count', chat)).toBe(1);
    expect(sampleValue(samples, 'cashcode_model_call_duration_seconds_sum', chat)).toBe(1.2);
    expect(sampleValue(samples, 'cashcode_model_call_duration_seconds_bucket', { ...chat, le: '1' })).toBe(0);
    expect(sampleValue(samples, 'cashcode_model_call_duration_seconds_bucket', { ...chat, le: '2.5' })).toBe(1);
    expect(samples.some((s) => Object.values(s.labels).includes('metrics-chat-usage'))).toBe(false);
  });

  it('Scenario: the WebSocket gauge follows connections opening and closing', async () => {
    const base = sampleValue(await scrape(t), 'cashcode_ws_connections');
    const first = await WsTestClient.connect(t.wsUrl);
    const second = await WsTestClient.connect(t.wsUrl);
    try {
      expect(sampleValue(await scrape(t), 'cashcode_ws_connections')).toBe(base + 2);
      await first.close();
      const afterClose = await scrapeUntil(t, (s) => sampleValue(s, 'cashcode_ws_connections') === base + 1);
      expect(sampleValue(afterClose, 'cashcode_ws_connections')).toBe(base + 1);
    } finally {
      await first.close();
      await second.close();
    }
    const closed = await scrapeUntil(t, (s) => sampleValue(s, 'cashcode_ws_connections') === base);
    expect(sampleValue(closed, 'cashcode_ws_connections')).toBe(base);
  });

  it('Scenario: the MCP gauge counts servers by connection state', async () => {
    const state = (samples: Sample[], name: string) => sampleValue(samples, 'cashcode_mcp_servers', { state: name });
    let samples = await scrape(t);
    expect(state(samples, 'disconnected')).toBe(2);
    expect(state(samples, 'connected')).toBe(0);
    expect((await request(t.httpUrl).post('/api/mcp/servers/stdio/connect').expect(200)).body.status).toBe('connected');
    expect((await request(t.httpUrl).post('/api/mcp/servers/broken/connect').expect(200)).body.status).toBe('error');
    samples = await scrape(t);
    expect(state(samples, 'connected')).toBe(1);
    expect(state(samples, 'error')).toBe(1);
    expect(state(samples, 'disconnected')).toBe(0);
    await request(t.httpUrl).post('/api/mcp/servers/stdio/disconnect').expect(200);
    samples = await scrape(t);
    expect(state(samples, 'connected')).toBe(0);
    expect(state(samples, 'disconnected')).toBe(1);
  });

  it('Scenario: without an API token, /metrics is open like the rest of the API, with the process metrics', async () => {
    const samples = await scrape(t);
    expect(samples.some((s) => s.name === 'cashcode_process_resident_memory_bytes' || s.name === 'cashcode_process_cpu_user_seconds_total')).toBe(true);
    expect(samples.every((s) => s.name.startsWith('cashcode_'))).toBe(true);
    const doc = await request(t.httpUrl).get('/api/docs-json').expect(200);
    const operation = doc.body.paths['/metrics'].get;
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/plain']);
    expect(operation.responses['401']).toBeDefined();
  });
});

describe('metrics behind the API token (e2e)', () => {
  let t: TestApp;
  let consoleDir: string;
  beforeAll(async () => {
    consoleDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-metrics-console-'));
    await fs.writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>console</title><app-root></app-root>');
    t = await startTestApp({ env: { CASHCODE_API_TOKEN: TOKEN, CASHCODE_CONSOLE_DIR: consoleDir } });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(consoleDir, { recursive: true, force: true });
  });

  it('Scenario: with an API token, /metrics needs it', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', 'Basic abc']) {
      const req = request(t.httpUrl).get('/metrics').set('Accept', '*/*');
      if (authorization) req.set('Authorization', authorization);
      const res = await req.expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ status: 401 });
      expect(res.text).not.toContain('cashcode_');
    }
    const samples = await scrape(t, TOKEN);
    expect(samples.some((s) => s.name === 'cashcode_ws_connections')).toBe(true);
  });

  it('Scenario: the console never answers /metrics', async () => {
    // a browser page load (Accept: text/html) without the token is refused, not answered with the console shell
    for (const path of ['/metrics', '/metrics/', '/METRICS', '/%6Detrics']) {
      const res = await request(t.httpUrl).get(path).set('Accept', 'text/html');
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('<app-root>');
    }
    // with the token the real endpoint answers; another spelling is a 404, never the shell
    const real = await request(t.httpUrl).get('/metrics').set('Accept', 'text/html').set('Authorization', `Bearer ${TOKEN}`);
    expect(real.status).toBe(200);
    expect(real.text).toContain('cashcode_');
    const odd = await request(t.httpUrl).get('/METRICS').set('Accept', 'text/html').set('Authorization', `Bearer ${TOKEN}`);
    expect(odd.status).toBe(404);
    expect(odd.text).not.toContain('<app-root>');
  });
});
