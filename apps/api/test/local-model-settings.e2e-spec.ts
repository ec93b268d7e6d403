/**
 * The model settings a user of a local model expects (openspec llm-settings "Requirement: Keyless OpenAI-compatible
 * servers", "Requirement: Last model used"): a keyless server is reached without any Authorization header; the last
 * model a turn used is saved and listed.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { LlmModelsResponse, PublicLlmSettings } from '@cashcode/contracts';
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

  it('Scenario: The last model used is saved and listed after a restart', async () => {
    fake.reset();
    fake.models = ['a-model', 'z-model'];
    const before = (await (await fetch(`${t.httpUrl}/api/settings/llm/models`)).json()) as LlmModelsResponse;
    // the keyless turn above used fake-model
    expect(before.last_used).toEqual({ provider: 'openai_compatible', model: 'fake-model' });
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue({ content: 'ok' });
      const done = client.next('done', (e) => e.chat_id === 'last-used-1');
      client.sendMessage('last-used-1', 'hello', { provider: 'openai_compatible', model: 'z-model' });
      await done;
    } finally {
      await client.close();
    }
    const file = join(t.configDir, 'settings', 'llm.json');
    // the save runs after the turn started; wait for it
    for (let i = 0; i < 50; i++) {
      if ((await fs.readFile(file, 'utf8')).includes('z-model')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>)['last_used']).toEqual({
      provider: 'openai_compatible',
      model: 'z-model',
    });
    const again = await startTestApp({ configDir: t.configDir });
    try {
      const listing = (await (await fetch(`${again.httpUrl}/api/settings/llm/models`)).json()) as LlmModelsResponse;
      expect(listing.last_used).toEqual({ provider: 'openai_compatible', model: 'z-model' });
      expect(listing.models.map((m) => m.id)).toEqual(['a-model', 'z-model']);
    } finally {
      await again.close();
    }
  });
});
