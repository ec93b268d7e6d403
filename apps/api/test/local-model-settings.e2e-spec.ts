/**
 * The model settings a user of a local model expects (openspec llm-settings "Requirement: Keyless OpenAI-compatible
 * servers"): a keyless server is reached without any Authorization header.
 */
import type { PublicLlmSettings } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { WsTestClient } from './support/ws-client';

describe('local model settings', () => {
  let t: TestApp;
  let fake: FakeModelServer;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('Scenario: A keyless OpenAI-compatible server gets requests without an Authorization header', async () => {
    const saved = await fetch(`${t.httpUrl}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl }, ollama: { base_url: '' } }),
    });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as PublicLlmSettings).openai_compatible).toEqual({
      base_url: fake.baseUrl,
      ready: true,
      api_key_configured: false,
    });

    const tested = await fetch(`${t.httpUrl}/api/settings/llm/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl }, ollama: {}, provider: 'openai_compatible' }),
    });
    expect(tested.status).toBe(200);
    expect(((await tested.json()) as { models: string[] }).models).toEqual(['fake-model']);
    expect((await fetch(`${t.httpUrl}/api/settings/llm/models`)).status).toBe(200);

    const client = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue({ content: 'local answer' });
      const done = client.next('done', (e) => e.chat_id === 'keyless-1');
      client.sendMessage('keyless-1', 'hello');
      await done;
    } finally {
      await client.close();
    }
    expect(fake.completions).toHaveLength(1);
    expect(fake.requests.length).toBeGreaterThanOrEqual(3);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(fake.requests.map(() => undefined));
  });
});
