/**
 * Provider failures in a turn (openspec agent-runner "Requirement: Provider errors and retries", llm-settings
 * "Requirement: Provider error classification"): classified errors, bounded retries with backoff honouring Retry-After,
 * one clear error, the prompt kept in history with an error marker (never sent to the model again), the title kept, the
 * chat still usable.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { ServerEvent } from '@cashcode/contracts';
import { PROVIDER_ERROR_MESSAGES } from '../src/llm-settings/provider-errors';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, eventNamesCollapsed, WsTestClient } from './support/ws-client';

describe('chat turn errors', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `error-chat-${++counter}`;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_LLM_MAX_RETRIES: '2' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  async function turn(chatId: string, content: string): Promise<ServerEvent[]> {
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    client.sendMessage(chatId, content);
    await end;
    return client.chatEvents(chatId);
  }

  it('Scenario: a 429 with Retry-After is retried after the requested delay, then the turn succeeds', async () => {
    const chatId = newChatId();
    fake.enqueue({ status: 429, headers: { 'retry-after-ms': '300' } }, { content: 'second time lucky' });
    const events = await turn(chatId, 'hi');
    expect(eventNamesCollapsed(events)).toEqual(['session_updated', 'delta', 'stream_end', 'done']);
    expect(fake.completions).toHaveLength(2);
    const gap = (fake.completions[1]?.receivedAt ?? 0) - (fake.completions[0]?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(290);
  });

  it('Scenario: a transient 500 is retried; retries are bounded and end in one rate-limit error', async () => {
    const chatId = newChatId();
    fake.enqueue({ status: 500 }, { content: 'recovered' });
    const ok = await turn(chatId, 'first');
    expect(ok.at(-1)?.event).toBe('done');
    expect(fake.completions).toHaveLength(2);

    fake.reset();
    const limited = { status: 429, headers: { 'retry-after': '0' } };
    fake.enqueue(limited, limited, limited, limited);
    const failed = (await turn(chatId, 'second')).slice(ok.length);
    expect(fake.completions).toHaveLength(3); // 1 + CASHCODE_LLM_MAX_RETRIES
    expect(failed).toEqual([
      { event: 'error', chat_id: chatId, detail: PROVIDER_ERROR_MESSAGES.rate_limit, code: 'rate_limit' },
    ]);
  });

  it('Scenario: a 401 gives one clear error, no retry, the prompt kept with an error marker, the title kept', async () => {
    const chatId = newChatId();
    fake.enqueue({
      status: 401,
      errorBody: { error: { message: 'Incorrect API key provided: sk-test-fake-key-0123456789', code: 'invalid_api_key' } },
    });
    const events = await turn(chatId, 'Who am I?');
    expect(events.map((e) => e.event)).toEqual(['session_updated', 'error']);
    const error = events[1] as Extract<ServerEvent, { event: 'error' }>;
    expect(error).toEqual({ event: 'error', chat_id: chatId, detail: PROVIDER_ERROR_MESSAGES.auth, code: 'auth' });
    expect(JSON.stringify(error)).not.toContain('sk-');
    expect(fake.completions).toHaveLength(1);
    const lines = (await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      role: 'user',
      content: 'Who am I?',
      error: { kind: 'auth', message: PROVIDER_ERROR_MESSAGES.auth },
    });
    expect(lines[0]).not.toContain('sk-');
    const projected = (await (await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`)).json()) as {
      messages: unknown[];
    };
    expect(projected.messages).toEqual([
      { role: 'user', content: 'Who am I?', error: { kind: 'auth', message: PROVIDER_ERROR_MESSAGES.auth }, cursor: 1 },
    ]);
    const metadata = JSON.parse(await fs.readFile(join(t.config.memoryDir, chatId, 'metadata.json'), 'utf8')) as object;
    expect(metadata).toEqual({ title: 'Who am I?', title_source: 'auto' });

    // the chat stays usable and the failed message is not part of its history
    fake.enqueue({ content: 'You are you.' });
    const next = (await turn(chatId, 'Try again')).slice(events.length);
    expect(eventNamesCollapsed(next)).toEqual(['delta', 'stream_end', 'done']);
    const messages = (fake.completions[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(messages.slice(1)).toEqual([{ role: 'user', content: 'Try again' }]);
  });

  it('Scenario: a failed prompt stays out of the model context, a retry is a new turn', async () => {
    const chatId = newChatId();
    const limited = { status: 429, headers: { 'retry-after': '0' } };
    fake.enqueue(limited, limited, limited);
    const failed = await turn(chatId, 'Summarise the plan');
    expect(failed.at(-1)).toMatchObject({ event: 'error', code: 'rate_limit' });

    // the retry re-sends the prompt as a new turn; history stays append-only
    fake.reset();
    fake.enqueue({ content: 'Here is the plan.' });
    const retried = (await turn(chatId, 'Summarise the plan')).slice(failed.length);
    expect(retried.at(-1)?.event).toBe('done');
    const sent = (fake.completions[0]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(sent.slice(1)).toEqual([{ role: 'user', content: 'Summarise the plan' }]);

    const response = await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`);
    const body = (await response.json()) as { messages: unknown[] };
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: 'Summarise the plan',
        error: { kind: 'rate_limit', message: PROVIDER_ERROR_MESSAGES.rate_limit },
        cursor: 1,
      },
      { role: 'user', content: 'Summarise the plan', cursor: 2 },
      {
        role: 'assistant',
        content: 'Here is the plan.',
        cursor: 3,
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        duration_ms: expect.any(Number),
      },
    ]);
  });

  it('Scenario: a context-length error is not retried', async () => {
    const chatId = newChatId();
    fake.enqueue({
      status: 400,
      errorBody: { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } },
    });
    const events = await turn(chatId, 'long');
    expect(events.at(-1)).toMatchObject({ event: 'error', code: 'context_length' });
    expect(fake.completions).toHaveLength(1);
  });

  it('Scenario: an unreachable provider is a clear error, the server keeps serving', async () => {
    const unreachable = await FakeModelServer.start();
    const url = unreachable.baseUrl;
    await unreachable.close();
    await configureFakeModel(t.httpUrl, url);
    try {
      const chatId = newChatId();
      const events = await turn(chatId, 'anyone there?');
      expect(events.at(-1)).toMatchObject({ event: 'error', chat_id: chatId, code: 'transient' });
    } finally {
      await configureFakeModel(t.httpUrl, fake.baseUrl);
    }
    const chatId = newChatId();
    const events = await turn(chatId, 'back?');
    expect(events.at(-1)?.event).toBe('done');
  });
});
