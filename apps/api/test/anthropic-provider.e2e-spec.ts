/**
 * The native Anthropic provider through the real application, the real `@anthropic-ai/sdk` over HTTP and a fake of
 * Anthropic's Messages API written from its documented wire format (openspec llm-settings "Requirement: Anthropic
 * provider", usage "Requirement: Prices"): settings with the key bound to its origin, the model list and connection
 * test, streamed answers, tool use both ways (parallel calls, errors, images), `max_tokens` and continue, prompt caching
 * breakpoints and a prefix that holds, cache reads and writes in the ledger, extended thinking in a tool loop,
 * per-message model choice, titles through the background model, and `/v1`.
 */
import request from 'supertest';
import type { PublicLlmSettings, ServerEvent, UsageRecord } from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { TITLE_SYSTEM_PROMPT } from '../src/chat/chat-title';
import { FakeAnthropicServer, type AnthropicRecordedRequest } from './support/fake-anthropic-server';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { joinedDeltas, WsTestClient } from './support/ws-client';

const OPENAI_KEY = 'sk-test-fake-key-0123456789';
const MODEL = 'claude-sonnet-4-5';
const CLAUDE = { provider: 'anthropic', model: MODEL };
/** a 1×1 PNG */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

type Block = Record<string, unknown> & { type: string };
interface Turn {
  role: string;
  content: Block[];
}
const bodyOf = (r: AnthropicRecordedRequest | undefined) =>
  (r?.body ?? {}) as { system?: Block[]; tools?: Block[]; messages: Turn[]; thinking?: unknown; max_tokens: number; stream?: boolean };
const isTitle = (r: AnthropicRecordedRequest) => JSON.stringify(r.body?.['system'] ?? '').includes(TITLE_SYSTEM_PROMPT.slice(0, 40));
const joinedReasoning = (events: readonly ServerEvent[]) => events.map((e) => (e.event === 'reasoning' ? e.text : '')).join('');

/** The request without its cache breakpoints (they move with the end of the conversation). */
function withoutCacheControl(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, inner: unknown) => (key === 'cache_control' ? undefined : inner));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Anthropic provider', () => {
  let t: TestApp;
  let claude: FakeAnthropicServer;
  let openai: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `anthropic-chat-${++counter}`;
  const probed: Array<Record<string, unknown>> = [];

  async function putSettings(body: Record<string, unknown>): Promise<request.Response> {
    return request(t.httpUrl).put('/api/settings/llm').send(body);
  }

  const connections = () => ({
    openai_compatible: { base_url: openai.baseUrl, api_key: OPENAI_KEY },
    ollama: {},
    anthropic: { base_url: claude.baseUrl, api_key: claude.apiKey },
  });

  beforeAll(async () => {
    claude = await FakeAnthropicServer.start();
    openai = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MODEL_TITLES: 'true' } });
    const saved = await putSettings(connections());
    expect(saved.status).toBe(200);
    const registry = t.app.get(ToolRegistry);
    const probe: AgentTool = {
      name: 'probe_tool',
      description: 'test tool',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      readOnly: true,
      execute: (args) => {
        probed.push(args);
        return Promise.resolve(args['path'] === 'missing' ? 'Error: no such file' : `probed ${String(args['path'])}`);
      },
    };
    const picture: AgentTool = {
      name: 'picture_tool',
      description: 'returns an image',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: () => Promise.resolve({ model: 'an image [image 1]', images: [{ mimeType: 'image/png', data: PIXEL }] }),
    };
    registry.register(probe);
    registry.register(picture);
    // the listing marks the models as taking images
    await request(t.httpUrl).get('/api/settings/llm/models').expect(200);
  });

  afterAll(async () => {
    await t?.close();
    await claude?.close();
    await openai?.close();
  });

  beforeEach(async () => {
    claude.reset();
    openai.reset();
    probed.length = 0;
    // title requests get a title; the chat steps come from the queue
    claude.setHandler((r) => (isTitle(r) ? { text: 'Claude Title' } : undefined));
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  async function turn(chatId: string, content: string, llm: { provider: string; model: string } = CLAUDE): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    client.sendMessage(chatId, content, llm);
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  const chatRequests = () => claude.messages.filter((r) => !isTitle(r));

  it('Scenario: an Anthropic connection is saved with its key bound to its origin, lists its models and tests', async () => {
    const settings = (await request(t.httpUrl).get('/api/settings/llm').expect(200)).body as PublicLlmSettings;
    expect(settings.anthropic).toEqual({ base_url: claude.baseUrl, ready: true, api_key_configured: true });
    expect(JSON.stringify(settings)).not.toContain(claude.apiKey);
    const models = (await request(t.httpUrl).get('/api/settings/llm/models').expect(200)).body;
    expect(models.providers.anthropic).toEqual({ ready: true, error: null });
    expect(models.models.filter((m: { provider: string }) => m.provider === 'anthropic')).toEqual([
      { provider: 'anthropic', id: 'claude-haiku-4-5', accepts_images: true, images_reported: true },
      { provider: 'anthropic', id: 'claude-sonnet-4-5', accepts_images: true, images_reported: true },
    ]);
    const listing = claude.requests.find((r) => r.path === '/v1/models');
    expect(listing?.headers['x-api-key'] ?? listing?.headers.authorization).toMatch(new RegExp(`(^|Bearer )${claude.apiKey}$`));
    expect(typeof listing?.headers['anthropic-version']).toBe('string');

    const tested = await request(t.httpUrl)
      .post('/api/settings/llm/test')
      .send({ ...connections(), anthropic: { base_url: claude.baseUrl }, provider: 'anthropic' })
      .expect(200);
    expect(tested.body).toMatchObject({ success: true, provider: 'anthropic', model_count: 2 });
    // a wrong key: the test fails with the authentication reason, never the key or the provider's text
    const wrong = await request(t.httpUrl)
      .post('/api/settings/llm/test')
      .send({ ...connections(), anthropic: { base_url: claude.baseUrl, api_key: 'sk-ant-wrong' }, provider: 'anthropic' })
      .expect(400);
    expect(wrong.body).toMatchObject({ reason: 'auth', detail: 'Authentication failed: check the API key.' });

    // the stored key never follows the base URL to another origin
    const moved = await putSettings({ ...connections(), anthropic: { base_url: 'https://elsewhere.example' } });
    expect(moved.status).toBe(422);
    expect(moved.body.errors).toEqual([{ field: 'anthropic.api_key', message: expect.stringContaining('another origin') }]);
    // a key without a base URL is for the public API
    const draft = await request(t.httpUrl)
      .post('/api/settings/llm/test')
      .send({ ...connections(), anthropic: { api_key: 'sk-ant-x' }, provider: 'ollama' })
      .expect(422);
    expect(draft.body.code).toBe('provider_not_ready');
  });

  it('Scenario: an Anthropic answer streams as delta events and the request carries cache breakpoints', async () => {
    const chatId = newChatId();
    claude.enqueue({ text: 'Hello from Claude!', usage: { input_tokens: 30, output_tokens: 5, cache_creation_input_tokens: 900 } });
    const events = await turn(chatId, 'Hi Claude');
    expect(joinedDeltas(events)).toBe('Hello from Claude!');
    expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false, usage: { prompt_tokens: 930, completion_tokens: 5, cache_write_tokens: 900 } });
    const body = bodyOf(chatRequests()[0]);
    expect(body.stream).toBe(true);
    expect(body.max_tokens).toBeGreaterThan(0);
    expect(body.system?.at(-1)).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    expect(body.tools?.at(-1)).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(body.tools?.slice(0, -1).some((tool) => 'cache_control' in tool)).toBe(false);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi Claude', cache_control: { type: 'ephemeral' } }] }]);
    const rows = (await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200)).body.messages;
    expect(rows.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello from Claude!' });
  });

  it('Scenario: each Anthropic request of a chat is the previous one with turns appended, breakpoints aside', async () => {
    const chatId = newChatId();
    claude.enqueue(
      { toolUses: [{ name: 'probe_tool', input: { path: 'a' } }] },
      { text: 'First.' },
      { text: 'Second.' },
    );
    await turn(chatId, 'One');
    await turn(chatId, 'Two');
    const [a, b, c] = chatRequests().map((r) => withoutCacheControl(r.body) as ReturnType<typeof bodyOf>);
    for (const [previous, next] of [
      [a, b],
      [b, c],
    ] as const) {
      expect(JSON.stringify(next?.system)).toBe(JSON.stringify(previous?.system));
      expect(JSON.stringify(next?.tools)).toBe(JSON.stringify(previous?.tools));
      const before = JSON.stringify(previous?.messages).slice(0, -1);
      expect(JSON.stringify(next?.messages).startsWith(before)).toBe(true);
    }
    // within the turn and across turns, the breakpoint at the previous request's end stays where it was written
    const third = bodyOf(chatRequests()[2]);
    const marked = third.messages.flatMap((m, i) => m.content.map((block, j) => ('cache_control' in block ? `${i}.${j}` : ''))).filter(Boolean);
    expect(marked).toHaveLength(2);
  });

  it('Scenario: parallel Anthropic tool calls run and their results, errors and images go back in one user turn', async () => {
    const chatId = newChatId();
    claude.enqueue(
      {
        text: 'Let me look.',
        toolUses: [
          { id: 'toolu_a', name: 'probe_tool', input: { path: 'found' } },
          { id: 'toolu_b', name: 'probe_tool', input: { path: 'missing' } },
          { id: 'toolu_c', name: 'picture_tool', input: {} },
        ],
      },
      { text: 'Done looking.' },
    );
    const events = await turn(chatId, 'Probe things');
    expect(probed.map((args) => args['path'])).toEqual(['found', 'missing']);
    expect(events.filter((e) => e.event === 'tool_call').map((e) => (e as { call_id: string }).call_id)).toEqual(['toolu_a', 'toolu_b', 'toolu_c']);
    const loop = bodyOf(chatRequests()[1]);
    const assistant = loop.messages.at(-2) as Turn;
    expect(assistant.role).toBe('assistant');
    expect(assistant.content.map((block) => block.type)).toEqual(['tool_use', 'tool_use', 'tool_use']);
    expect(assistant.content[0]).toEqual({ type: 'tool_use', id: 'toolu_a', name: 'probe_tool', input: { path: 'found' } });
    const results = loop.messages.at(-1) as Turn;
    expect(results.role).toBe('user');
    expect(results.content.slice(0, 3)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'probed found' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'Error: no such file', is_error: true },
      { type: 'tool_result', tool_use_id: 'toolu_c', content: 'an image [image 1]' },
    ]);
    expect(results.content.some((block) => block.type === 'image' && (block['source'] as { data: string }).data === PIXEL)).toBe(true);
    expect(joinedDeltas(events)).toBe('Let me look.Done looking.');
  });

  it('Scenario: an Anthropic answer cut at max_tokens is marked truncated and continue carries on', async () => {
    const chatId = newChatId();
    claude.enqueue({ text: 'The beginning', stopReason: 'max_tokens' });
    const events = await turn(chatId, 'Write an essay');
    expect(events.at(-1)).toMatchObject({ event: 'done', truncated: true });
    claude.enqueue({ text: ' and the end.' });
    const end = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'chat_action', chat_id: chatId, action: 'continue', metadata: { llm: CLAUDE } });
    await end;
    const continued = bodyOf(chatRequests()[1]);
    expect(continued.messages.at(-2)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'The beginning' }] });
    expect(continued.messages.at(-1)?.role).toBe('user');
    const rows = (await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200)).body.messages;
    expect(rows.at(-1)).toMatchObject({ content: 'The beginning and the end.' });
  });

  it('Scenario: cache reads and writes are recorded and priced apart', async () => {
    await request(t.httpUrl)
      .put('/api/usage/prices')
      .send({
        prices: [
          { provider: 'anthropic', model: MODEL, input_per_million: 3, cached_input_per_million: 0.3, cache_write_per_million: 3.75, output_per_million: 15, currency: 'USD' },
        ],
      })
      .expect(200);
    const chatId = newChatId();
    claude.enqueue({ text: 'Cached.', usage: { input_tokens: 100_000, output_tokens: 100_000, cache_read_input_tokens: 1_000_000, cache_creation_input_tokens: 200_000 } });
    const events = await turn(chatId, 'Price me');
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    // 0.1 M × 3 + 1 M × 0.3 + 0.2 M × 3.75 + 0.1 M × 15
    expect(done.cost).toEqual({ amount: 2.85, currency: 'USD' });
    expect(done.usage).toMatchObject({ prompt_tokens: 1_300_000, cached_tokens: 1_000_000, cache_write_tokens: 200_000 });
    const records = (await request(t.httpUrl).get(`/api/usage/records?chat_id=${chatId}`).expect(200)).body.records as UsageRecord[];
    expect(records.find((r) => r.purpose === 'chat')).toMatchObject({
      provider: 'anthropic',
      prompt_tokens: 1_300_000,
      cached_tokens: 1_000_000,
      cache_write_tokens: 200_000,
      cost: { amount: 2.85, currency: 'USD' },
    });
    await request(t.httpUrl).put('/api/usage/prices').send({ prices: [] }).expect(200);
  });

  it('Scenario: with extended thinking on, thinking streams as reasoning and its blocks go back within the tool loop only', async () => {
    await request(t.httpUrl).put('/api/settings/llm/thinking-models').send({ ...CLAUDE, thinking: true }).expect(200);
    try {
      const chatId = newChatId();
      claude.enqueue(
        { thinking: 'I should probe first.', signature: 'sig-1', toolUses: [{ id: 'toolu_t', name: 'probe_tool', input: { path: 'x' } }] },
        { thinking: 'Now answer.', signature: 'sig-2', text: 'Probed it.' },
        { text: 'Next turn.' },
      );
      const events = await turn(chatId, 'Think and probe');
      expect(joinedReasoning(events)).toBe('I should probe first.\n\nNow answer.');
      expect(joinedDeltas(events)).toBe('Probed it.');
      const first = bodyOf(chatRequests()[0]);
      expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
      expect(first.max_tokens).toBeGreaterThan(4096);
      const loop = bodyOf(chatRequests()[1]);
      expect(loop.messages.at(-2)?.content[0]).toEqual({ type: 'thinking', thinking: 'I should probe first.', signature: 'sig-1' });
      const rows = (await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200)).body.messages;
      expect(rows.at(-1)).toMatchObject({ content: 'Probed it.', reasoning: 'I should probe first.\n\nNow answer.' });
      await turn(chatId, 'Again');
      const next = JSON.stringify(chatRequests()[2]?.body);
      expect(next).not.toContain('I should probe first.');
      expect(next).not.toContain('"thinking","thinking"');
      // the title never sees the thinking
      for (let i = 0; i < 100 && !claude.messages.some(isTitle); i++) await sleep(20);
      expect(JSON.stringify(claude.messages.find(isTitle)?.body)).not.toContain('I should probe first.');
      const settings = (await request(t.httpUrl).get('/api/settings/llm').expect(200)).body as PublicLlmSettings;
      expect(settings.thinking_models).toEqual([CLAUDE]);
    } finally {
      await request(t.httpUrl).put('/api/settings/llm/thinking-models').send({ ...CLAUDE, thinking: false }).expect(200);
    }
  });

  it('Scenario: a chat switches between an OpenAI-compatible model and Claude message by message', async () => {
    const chatId = newChatId();
    openai.enqueue({ content: 'From the OpenAI side.' });
    await turn(chatId, 'First via OpenAI', { provider: 'openai_compatible', model: 'fake-model' });
    claude.enqueue({ text: 'From Claude.' });
    const events = await turn(chatId, 'Then via Claude');
    expect(joinedDeltas(events)).toBe('From Claude.');
    const body = bodyOf(chatRequests()[0]);
    expect(withoutCacheControl(body.messages)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'First via OpenAI' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'From the OpenAI side.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Then via Claude' }] },
    ]);
  });

  it('Scenario: the background model on Anthropic writes the chat title', async () => {
    await putSettings({ ...connections(), anthropic: { base_url: claude.baseUrl }, background: { provider: 'anthropic', model: 'claude-haiku-4-5' } }).then((r) =>
      expect(r.status).toBe(200),
    );
    try {
      const chatId = newChatId();
      openai.enqueue({ content: 'An answer.' });
      await turn(chatId, 'Name this chat', { provider: 'openai_compatible', model: 'fake-model' });
      for (let i = 0; i < 100 && !claude.messages.some(isTitle); i++) await sleep(20);
      const title = claude.messages.find(isTitle);
      expect(title?.body).toMatchObject({ model: 'claude-haiku-4-5' });
      expect(title?.body?.['stream']).toBeUndefined();
      let listed = '';
      for (let i = 0; i < 100 && listed !== 'Claude Title'; i++) {
        const sessions = (await request(t.httpUrl).get('/api/sessions').expect(200)).body.sessions as Array<{ chat_id: string; title: string }>;
        listed = sessions.find((s) => s.chat_id === chatId)?.title ?? '';
        if (listed !== 'Claude Title') await sleep(20);
      }
      expect(listed).toBe('Claude Title');
    } finally {
      await putSettings({ ...connections(), anthropic: { base_url: claude.baseUrl }, background: null }).then((r) => expect(r.status).toBe(200));
    }
  });

  it('Scenario: /v1/chat/completions answers with a Claude model', async () => {
    await request(t.httpUrl).put('/api/settings/openai-compat').send({ enabled: true }).expect(200);
    const created = await request(t.httpUrl).post('/api/settings/openai-compat/keys').send({ name: 'anthropic-test' }).expect(201);
    claude.enqueue({ text: 'Claude via v1.' });
    const response = await request(t.httpUrl)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${created.body.secret as string}`)
      .send({ model: `cashcode:anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hello' }] })
      .expect(200);
    expect(response.body.choices[0].message.content).toBe('Claude via v1.');
    expect(bodyOf(chatRequests()[0]).messages.at(-1)).toMatchObject({ role: 'user' });
  });

  it('Scenario: an Anthropic overloaded error before any text is retried, an invalid key fails the turn clearly', async () => {
    const chatId = newChatId();
    claude.enqueue({ streamError: 'overloaded_error' }, { text: 'Recovered.' });
    const events = await turn(chatId, 'Try');
    expect(joinedDeltas(events)).toBe('Recovered.');
    claude.enqueue({ status: 401, errorType: 'authentication_error' });
    const failed = await turn(chatId, 'Again');
    expect(failed.find((e) => e.event === 'error')).toMatchObject({ code: 'auth', detail: 'Authentication failed: check the API key.' });
  });
});
