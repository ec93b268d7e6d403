/**
 * Model-written chat titles through the real gateway against the fake model (openspec chat "Requirement: Chat
 * titles"): the title request is recognised by its system prompt; the fallback title, the model title pushed with
 * `session_updated` after `done`, the background model, a rename while the request runs, and failures.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { TITLE_MAX_TOKENS, TITLE_SYSTEM_PROMPT } from '../src/chat/chat-title';
import { FakeModelServer, type FakeStep, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface Body {
  model: string;
  stream?: boolean;
  max_tokens?: number;
  messages: Array<{ role: string; content: string }>;
}
const bodyOf = (r: RecordedRequest): Body => r.body as Body;
const isTitleRequest = (r: RecordedRequest) => bodyOf(r).messages?.[0]?.content === TITLE_SYSTEM_PROMPT;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('model-written chat titles', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `title-chat-${++counter}`;
  let titleStep: FakeStep = { content: 'Trip to Rome' };

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MODEL_TITLES: 'true' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    fake.reset();
    titleStep = { content: 'Trip to Rome' };
    fake.setHandler((r) => (isTitleRequest(r) ? titleStep : undefined));
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  const titleRequests = () => fake.completions.filter(isTitleRequest);

  async function turn(chatId: string, content: string): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, content);
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  async function metadata(chatId: string): Promise<Record<string, unknown>> {
    return JSON.parse(await fs.readFile(join(t.config.memoryDir, chatId, 'metadata.json'), 'utf8')) as Record<string, unknown>;
  }

  async function listedTitle(chatId: string): Promise<string | undefined> {
    const res = await request(t.httpUrl).get('/api/sessions').expect(200);
    return (res.body.sessions as Array<{ chat_id: string; title: string }>).find((s) => s.chat_id === chatId)?.title;
  }

  it('Scenario: the model titles a new chat after its first turn without delaying done', async () => {
    const chatId = newChatId();
    titleStep = { content: '"Trip to Rome."', delayMs: 400 };
    fake.enqueue({ content: 'Rome in May is lovely.' });
    const events = await turn(chatId, 'CALL:[["plan"]] Plan a long weekend in Rome for me and my family please');
    // the fallback first (clean text, 40 code points), then the answer; done does not wait for the title
    expect(events[0]).toMatchObject({ event: 'session_updated', title: 'Plan a long weekend in Rome for me and m' });
    expect(events.at(-1)?.event).toBe('done');
    expect(events.filter((e) => e.event === 'session_updated')).toHaveLength(1);

    const updated = await client.next('session_updated', (e) => e.chat_id === chatId && e.title === 'Trip to Rome');
    expect(updated.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    expect(await metadata(chatId)).toMatchObject({ title: 'Trip to Rome', title_source: 'model' });
    expect(await listedTitle(chatId)).toBe('Trip to Rome');

    const [title] = titleRequests();
    const body = bodyOf(title!);
    expect(body).toMatchObject({ model: 'fake-model', stream: false, max_tokens: TITLE_MAX_TOKENS });
    expect(body.messages[1]?.content).toContain('Plan a long weekend in Rome');
    expect(body.messages[1]?.content).toContain('Rome in May is lovely.');

    // later turns never ask again
    fake.enqueue({ content: 'ok' });
    await turn(chatId, 'And in June?');
    await sleep(200);
    expect(titleRequests()).toHaveLength(1);
  });

  it('Scenario: a rename while the title request runs is kept', async () => {
    const chatId = newChatId();
    titleStep = { content: 'Model title', delayMs: 600 };
    fake.enqueue({ content: 'Sure.' });
    await turn(chatId, 'Help me with my taxes');
    await request(t.httpUrl).patch(`/api/sessions/${chatId}`).send({ title: 'Taxes 2026' }).expect(200);
    // let the title request finish
    await sleep(900);
    expect(titleRequests()).toHaveLength(1);
    expect(await metadata(chatId)).toEqual({ title: 'Taxes 2026' });
    expect(await listedTitle(chatId)).toBe('Taxes 2026');
    expect(client.ofType('session_updated').some((e) => e.title === 'Model title')).toBe(false);
  });

  it('Scenario: a failed or empty title request keeps the fallback title', async () => {
    for (const step of [{ status: 500 }, { content: '  \n ' }, { status: 401 }] satisfies FakeStep[]) {
      const chatId = newChatId();
      titleStep = step;
      const asked = titleRequests().length;
      fake.enqueue({ content: 'Answer.' });
      await turn(chatId, 'What is a monad?');
      await until(() => titleRequests().length === asked + 1);
      await sleep(200);
      expect(await metadata(chatId)).toEqual({ title: 'What is a monad?', title_source: 'auto' });
      expect(await listedTitle(chatId)).toBe('What is a monad?');
    }
  });

  it('Scenario: a chat titled by the user before its first message is not retitled', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Hi.' });
    await turn(chatId, 'Hello');
    // a second chat: renamed (directory created) before it has any history
    const renamed = newChatId();
    await fs.mkdir(join(t.config.memoryDir, renamed), { recursive: true });
    await request(t.httpUrl).patch(`/api/sessions/${renamed}`).send({ title: 'Mine' }).expect(200);
    await sleep(300);
    const asked = titleRequests().length;
    fake.enqueue({ content: 'Hi again.' });
    await turn(renamed, 'Hello there');
    await sleep(300);
    expect(titleRequests()).toHaveLength(asked);
    expect(await listedTitle(renamed)).toBe('Mine');
  });

  it('Scenario: the background model of the LLM settings writes the title', async () => {
    const put = await request(t.httpUrl)
      .put('/api/settings/llm')
      .send({
        openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test-fake-key-0123456789' },
        ollama: { base_url: '' },
        background: { provider: 'openai_compatible', model: 'small-model' },
      });
    expect(put.status).toBe(200);
    try {
      const chatId = newChatId();
      fake.enqueue({ content: 'Done.' });
      await turn(chatId, 'Summarise this article');
      await client.next('session_updated', (e) => e.chat_id === chatId && e.title === 'Trip to Rome');
      expect(bodyOf(titleRequests()[0]!).model).toBe('small-model');
    } finally {
      await configureFakeModel(t.httpUrl, fake.baseUrl);
    }
  });
});
