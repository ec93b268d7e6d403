/**
 * Reasoning models and the quirks of real OpenAI-compatible servers, through the real gateway and the real `openai`
 * client against the fake model (openspec agent-runner "Requirement: Reasoning kept apart from the answer" and
 * "Requirement: Provider stream quirks"). Each stream is scripted as its provider documents it: DeepSeek's and vLLM's
 * `reasoning_content`, OpenRouter's `reasoning` and its error object inside a 200 stream, Qwen3's `<think>` block,
 * and servers that omit ids, indexes, `finish_reason`, usage or `[DONE]`.
 */
import request from 'supertest';
import type { ServerEvent, UsageRecord } from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { TITLE_SYSTEM_PROMPT } from '../src/chat/chat-title';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, joinedDeltas, WsTestClient } from './support/ws-client';

interface Body {
  messages: Array<Record<string, unknown> & { role: string; content: unknown }>;
}
const bodyOf = (r: RecordedRequest | undefined): Body => r?.body as Body;
const isTitleRequest = (r: RecordedRequest) => bodyOf(r).messages?.[0]?.content === TITLE_SYSTEM_PROMPT;
const joinedReasoning = (events: readonly ServerEvent[]) =>
  events.map((e) => (e.event === 'reasoning' ? e.text : '')).join('');

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A chunk of a chat-completion stream (the OpenAI shape every server starts from). */
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-q',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'fake-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

describe('reasoning models and provider quirks', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `reasoning-chat-${++counter}`;
  const calls: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MODEL_TITLES: 'true' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const probe: AgentTool = {
      name: 'probe_tool',
      description: 'test tool',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      readOnly: true,
      execute: (args) => {
        calls.push(args);
        return Promise.resolve(`probed ${JSON.stringify(args)}`);
      },
    };
    t.app.get(ToolRegistry).register(probe);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    fake.reset();
    calls.length = 0;
    // titles answer with a think block the title must not keep
    fake.setHandler((r) => (isTitleRequest(r) ? { content: 'Greeting Chat', reasoning: 'title musings', reasoningAs: 'think' } : undefined));
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

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

  async function messages(chatId: string): Promise<Array<Record<string, unknown>>> {
    const response = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200);
    return response.body.messages as Array<Record<string, unknown>>;
  }

  const chatRequests = () => fake.completions.filter((r) => !isTitleRequest(r));

  it('Scenario: reasoning_content deltas stream as reasoning events, apart from the answer, and are stored with it', async () => {
    const chatId = newChatId();
    fake.enqueue({ reasoning: 'The user greets me; greet back.', content: 'Hello!' });
    const events = await turn(chatId, 'Hi');
    expect(joinedReasoning(events)).toBe('The user greets me; greet back.');
    expect(joinedDeltas(events)).toBe('Hello!');
    // every reasoning event comes before the first delta, all with the turn's stream id
    const firstDelta = events.findIndex((e) => e.event === 'delta');
    const lastReasoning = events.map((e) => e.event).lastIndexOf('reasoning');
    expect(lastReasoning).toBeGreaterThan(-1);
    expect(lastReasoning).toBeLessThan(firstDelta);
    const rows = await messages(chatId);
    expect(rows.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello!', reasoning: 'The user greets me; greet back.' });
  });

  it('Scenario: a reasoning field streams as reasoning like reasoning_content', async () => {
    const chatId = newChatId();
    fake.enqueue({ reasoning: 'OpenRouter style thoughts.', reasoningAs: 'reasoning', content: 'Answer.' });
    const events = await turn(chatId, 'Question');
    expect(joinedReasoning(events)).toBe('OpenRouter style thoughts.');
    expect(joinedDeltas(events)).toBe('Answer.');
  });

  it('Scenario: a leading think block in the content is reasoning, split wherever the stream cuts its tags', async () => {
    const chatId = newChatId();
    // streamed in pieces of 8 characters: both tags are cut across chunks
    fake.enqueue({ reasoning: 'Qwen3 thinks here.', reasoningAs: 'think', content: 'The answer is 4.' });
    const events = await turn(chatId, '2+2?');
    expect(joinedReasoning(events)).toBe('Qwen3 thinks here.');
    expect(joinedDeltas(events)).toBe('The answer is 4.');
    expect((await messages(chatId)).at(-1)).toMatchObject({ content: 'The answer is 4.', reasoning: 'Qwen3 thinks here.' });
  });

  it('Scenario: reasoning is never sent back in later turns, and never reaches the title', async () => {
    const chatId = newChatId();
    fake.enqueue({ reasoning: 'SECRET-THOUGHT-1', content: 'First answer.' });
    await turn(chatId, 'First');
    fake.enqueue({ content: 'Second answer.' });
    await turn(chatId, 'Second');
    const second = bodyOf(chatRequests()[1]);
    expect(JSON.stringify(second)).not.toContain('SECRET-THOUGHT-1');
    expect(second.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'First answer.' }]);
    // the title request saw the answer only; the title kept none of its own think block
    for (let i = 0; i < 100 && !fake.completions.some(isTitleRequest); i++) await sleep(20);
    const title = fake.completions.find(isTitleRequest);
    expect(JSON.stringify(bodyOf(title))).not.toContain('SECRET-THOUGHT-1');
    for (let i = 0; i < 100; i++) {
      const listed = await request(t.httpUrl).get('/api/sessions');
      const row = (listed.body.sessions as Array<{ chat_id: string; title: string }>).find((s) => s.chat_id === chatId);
      if (row?.title === 'Greeting Chat') break;
      await sleep(20);
    }
    const listed = await request(t.httpUrl).get('/api/sessions');
    expect((listed.body.sessions as Array<{ chat_id: string; title: string }>).find((s) => s.chat_id === chatId)?.title).toBe('Greeting Chat');
  });

  it('Scenario: within a tool loop the reasoning goes back in the field the provider streamed it in', async () => {
    const chatId = newChatId();
    fake.enqueue(
      { reasoning: 'I need the file.', toolCalls: [{ name: 'probe_tool', arguments: '{"path":"a"}' }] },
      { reasoning: 'Now I can answer.', content: 'Done.' },
    );
    const events = await turn(chatId, 'Look');
    expect(joinedReasoning(events)).toBe('I need the file.\n\nNow I can answer.');
    const loop = bodyOf(chatRequests()[1]);
    const assistant = loop.messages.find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({ reasoning_content: 'I need the file.' });
    expect(assistant).not.toHaveProperty('replay');
    expect((await messages(chatId)).at(-1)).toMatchObject({ content: 'Done.', reasoning: 'I need the file.\n\nNow I can answer.' });
    fake.enqueue({ content: 'Later.' });
    await turn(chatId, 'Again');
    expect(JSON.stringify(bodyOf(chatRequests()[2]))).not.toContain('I need the file.');
  });

  it('Scenario: tool calls without ids, with one id reused, or all at index 0 get unique ids and all run', async () => {
    const chatId = newChatId();
    fake.enqueue(
      {
        rawChunks: [
          chunk({ role: 'assistant', content: null }),
          // no ids at all
          chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'probe_tool', arguments: '{"path":"1"}' } }] }),
          // one id for two calls
          chunk({ tool_calls: [{ index: 1, id: 'dup', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"2"}' } }] }),
          chunk({ tool_calls: [{ index: 2, id: 'dup', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"3"}' } }] }),
          chunk({}, 'tool_calls'),
        ],
      },
      {
        rawChunks: [
          chunk({ role: 'assistant', content: null }),
          // every call at index 0, each with its own id
          chunk({ tool_calls: [{ index: 0, id: 'x1', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"4"}' } }] }),
          chunk({ tool_calls: [{ index: 0, id: 'x2', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"5"}' } }] }),
          chunk({}, 'tool_calls'),
        ],
      },
      { content: 'All probed.' },
    );
    const events = await turn(chatId, 'Probe');
    expect(calls.map((args) => args['path'])).toEqual(['1', '2', '3', '4', '5']);
    const ids = events.filter((e) => e.event === 'tool_call').map((e) => (e as { call_id: string }).call_id);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    expect(joinedDeltas(events)).toBe('All probed.');
  });

  it('Scenario: arguments streamed as one chunk or as a JSON object are accepted', async () => {
    const chatId = newChatId();
    fake.enqueue(
      {
        rawChunks: [
          chunk({ role: 'assistant', content: '' }),
          chunk({ tool_calls: [{ index: 0, id: 'o1', type: 'function', function: { name: 'probe_tool', arguments: { path: 'obj' } } }] }),
          chunk({ tool_calls: [{ index: 1, id: 'o2', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"whole"}' } }] }),
          chunk({}, 'tool_calls'),
        ],
      },
      { content: 'ok' },
    );
    await turn(chatId, 'Args');
    expect(calls).toEqual([{ path: 'obj' }, { path: 'whole' }]);
  });

  it('Scenario: a stream without finish_reason or with an empty tool_calls list ends the answer normally', async () => {
    const chatId = newChatId();
    fake.enqueue({
      rawChunks: [chunk({ role: 'assistant', content: 'Plain ', tool_calls: [] }), chunk({ content: 'answer.', tool_calls: [] })],
    });
    const events = await turn(chatId, 'Go');
    expect(joinedDeltas(events)).toBe('Plain answer.');
    expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false });
    expect(calls).toEqual([]);
  });

  it('Scenario: usage only in the last chunk, or none, is recorded; missing usage is estimated', async () => {
    const chatId = newChatId();
    fake.enqueue(
      { rawChunks: [chunk({ content: 'With usage.' }, 'stop', { usage: { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 } })] },
      { rawChunks: [chunk({ content: 'Without usage.' }, 'stop')] },
    );
    const first = await turn(chatId, 'One');
    expect(first.at(-1)).toMatchObject({ event: 'done', usage: { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 } });
    await turn(chatId, 'Two');
    const records = (await request(t.httpUrl).get(`/api/usage/records?chat_id=${chatId}`).expect(200)).body.records as UsageRecord[];
    const ours = records.filter((r) => r.chat_id === chatId && r.purpose === 'chat').sort((a, b) => a.id - b.id);
    expect(ours.map((r) => [r.outcome, r.estimated, r.prompt_tokens])).toEqual([
      ['ok', false, 21],
      ['ok', true, expect.any(Number)],
    ]);
  });

  it('Scenario: an error object inside a 200 stream fails the call with a clear error', async () => {
    const chatId = newChatId();
    // OpenRouter: a provider failing mid-stream; nothing was shown yet, so the call is retried once, then fails
    const broken = {
      rawChunks: [
        chunk(
          { content: '' },
          'error',
          { error: { code: 502, message: 'Provider disconnected unexpectedly' } },
        ),
      ],
    };
    fake.enqueue(broken, broken, broken, broken);
    const events = await turn(chatId, 'Fail');
    const error = events.find((e) => e.event === 'error') as Extract<ServerEvent, { event: 'error' }>;
    expect(error).toMatchObject({ code: 'transient', detail: 'The model service returned a temporary error: try again later.' });
    expect(error.detail).not.toContain('Provider disconnected');
  });

  it('Scenario: a stream that ends without [DONE] is a complete answer', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'No done marker.', omitDone: true });
    const events = await turn(chatId, 'Go');
    expect(joinedDeltas(events)).toBe('No done marker.');
    expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false });
  });

  it('Scenario: an answer cut at the output limit is marked truncated and can be continued', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'The first half', finishReason: 'length' });
    const events = await turn(chatId, 'Write a lot');
    expect(events.at(-1)).toMatchObject({ event: 'done', truncated: true });
    expect((await messages(chatId)).at(-1)).toMatchObject({ content: 'The first half', truncated: true });
    fake.enqueue({ content: ' and the rest.' });
    const end = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'chat_action', chat_id: chatId, action: 'continue', metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' } } });
    await end;
    const rows = await messages(chatId);
    expect(rows.at(-1)).toMatchObject({ content: 'The first half and the rest.' });
    expect(rows.at(-1)).not.toHaveProperty('truncated');
  });
});
