/**
 * The `/v1` limits hold for chat-bound requests too (openspec openai-compat "Requirement: Limits hold for every /v1
 * turn"): one concurrency limit over all turns, and a bound on the chats the endpoint creates.
 */
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel } from './support/ws-client';
import { MAX_CONCURRENT_TURNS, MAX_NEW_CHATS_PER_MINUTE } from '../src/openai-compat/openai-compat-admission';

async function enable(t: TestApp): Promise<string> {
  const put = await fetch(`${t.httpUrl}/api/settings/openai-compat`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enabled: true, default_model: { provider: 'openai_compatible', model: 'fake-model' } }),
  });
  expect(put.status).toBe(200);
  const created = await fetch(`${t.httpUrl}/api/settings/openai-compat/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'limits' }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { secret: string }).secret;
}

function complete(t: TestApp, key: string, chatId: string): Promise<Response> {
  return fetch(`${t.httpUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-cashcode-chat-id': chatId },
    body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: `hello ${chatId}` }] }),
  });
}

async function errorCode(response: Response): Promise<string | null> {
  return ((await response.json()) as { error: { code: string | null } }).error.code;
}

async function chatExists(t: TestApp, chatId: string): Promise<boolean> {
  const response = await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`);
  if (response.status === 404) return false;
  expect(response.status).toBe(200);
  return true;
}

describe('OpenAI-compatible endpoint limits', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let key: string;

  beforeEach(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    key = await enable(t);
  });

  afterEach(async () => {
    await t?.close();
    await fake?.close();
  });

  it('Scenario: chat-bound requests share the concurrency limit', async () => {
    const count = MAX_CONCURRENT_TURNS + 4;
    // every admitted turn's model call takes long enough for all the requests to arrive meanwhile
    for (let i = 0; i < count; i++) fake.enqueue({ content: `answer ${i}`, delayMs: 3000 });
    const chatIds = Array.from({ length: count }, (_, i) => `v1-limit-${i}`);
    const responses = await Promise.all(chatIds.map((chatId) => complete(t, key, chatId)));
    const admitted = chatIds.filter((_, i) => responses[i]?.status === 200);
    const refused = chatIds.filter((_, i) => responses[i]?.status === 429);
    expect(admitted).toHaveLength(MAX_CONCURRENT_TURNS);
    expect(refused).toHaveLength(4);
    for (const [i, response] of responses.entries()) {
      if (response.status !== 429) continue;
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await errorCode(response)).toBe('too_many_turns');
      expect(chatIds[i]).toBeDefined();
    }
    expect(fake.completions).toHaveLength(MAX_CONCURRENT_TURNS);
    for (const chatId of admitted) expect(await chatExists(t, chatId)).toBe(true);
    for (const chatId of refused) expect(await chatExists(t, chatId)).toBe(false);
  });

  it('Scenario: creating chats through /v1 is bounded', async () => {
    for (let i = 0; i < MAX_NEW_CHATS_PER_MINUTE; i++) {
      fake.enqueue({ content: `answer ${i}` });
      const response = await complete(t, key, `v1-new-${i}`);
      expect(response.status).toBe(200);
    }
    const refused = await complete(t, key, 'v1-new-one-too-many');
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe('too_many_chats');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await chatExists(t, 'v1-new-one-too-many')).toBe(false);
    // an existing chat goes on
    fake.enqueue({ content: 'again' });
    expect((await complete(t, key, 'v1-new-0')).status).toBe(200);
  });
});
