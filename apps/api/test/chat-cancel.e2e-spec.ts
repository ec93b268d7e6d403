/**
 * Cancel stops the model stream and the running tools, per-chat serialisation vs cross-chat concurrency (openspec
 * chat), fan-out to every connection of a chat (openspec chat), deleting a session mid-turn, and a restart on the same
 * data dir (openspec memory).
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

async function readHistory(t: TestApp, chatId: string): Promise<Array<Record<string, unknown>>> {
  const text = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('chat cancel and concurrency', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `cancel-chat-${++counter}`;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
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

  it('Scenario: cancel mid-stream aborts the model request, persists the partial answer marked cancelled', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['Partial ', 'answer'], hangAfterChunks: true });
    client.sendMessage(chatId, 'Tell me a long story');
    await client.waitForText(chatId, 'Partial answer');
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    await fake.waitForAbort(0);
    expect((await done).cancelled).toBe(true);

    const tail = client.chatEvents(chatId).map((e) => e.event).slice(-3);
    expect(tail).toEqual(['stop_ack', 'stream_end', 'done']);
    expect(client.ofType('error')).toHaveLength(0);
    const history = await readHistory(t, chatId);
    expect(history).toEqual([
      expect.objectContaining({ cursor: 1, role: 'user', content: 'Tell me a long story' }),
      expect.objectContaining({ cursor: 2, role: 'assistant', content: 'Partial answer', cancelled: true }),
    ]);
    const messages = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`);
    expect(messages.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'Tell me a long story',
      'Partial answer',
    ]);
  });

  it('Scenario: cancel before any text was streamed persists nothing', async () => {
    const chatId = newChatId();
    fake.enqueue({ hang: true });
    client.sendMessage(chatId, 'Think hard');
    await fake.waitForRequests(1);
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'stop', chat_id: chatId });
    expect(await done).toMatchObject({ cancelled: true, usage: { total_tokens: 0 } });
    await fake.waitForAbort(0);
    expect(existsSync(join(t.config.memoryDir, chatId, 'history.jsonl'))).toBe(false);
  });

  it('Scenario: cancel during a tool call aborts the tool through its signal', async () => {
    const chatId = newChatId();
    const registry = t.app.get(ToolRegistry);
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    let sawAbort!: (reason: string) => void;
    const aborted = new Promise<string>((resolve) => (sawAbort = resolve));
    const slowTool: AgentTool = {
      name: 'slow_tool',
      description: 'waits until cancelled',
      parameters: { type: 'object', properties: {} },
      readOnly: false,
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          started();
          ctx.signal.addEventListener('abort', () => {
            sawAbort('aborted');
            reject(new Error('cancelled'));
          });
        }),
    };
    registry.register(slowTool);
    fake.enqueue({ toolCalls: [{ name: 'slow_tool', arguments: '{}' }] });
    client.sendMessage(chatId, 'run the slow tool');
    await toolStarted;
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    expect(await aborted).toBe('aborted');
    expect((await done).cancelled).toBe(true);
    registry.unregister('slow_tool');
    expect(client.ofType('tool_result')).toHaveLength(0);
    expect(fake.completions).toHaveLength(1);
  });

  it('Scenario: turns of one chat run one after another; another chat runs meanwhile; cancel keeps queued turns', async () => {
    const busy = newChatId();
    const other = newChatId();
    fake.setHandler((req) => {
      const messages = (req.body as { messages: Array<{ content: string }> }).messages;
      const last = messages.at(-1)?.content ?? '';
      if (last === 'first') return { chunks: ['working'], hangAfterChunks: true };
      if (last === 'second') return { content: 'second answer' };
      return { content: 'other answer' };
    });
    client.sendMessage(busy, 'first');
    await client.waitFor('delta', (e) => e.chat_id === busy);
    client.sendMessage(busy, 'second');

    // a different chat is not held up by the busy one
    const otherDone = client.next('done', (e) => e.chat_id === other);
    client.sendMessage(other, 'hello other');
    expect((await otherDone).cancelled).toBe(false);

    // the busy chat's second message has not reached the model: it waits for the first turn
    const bodies = () => fake.completions.map((r) => (r.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content);
    expect(bodies()).toEqual(['first', 'hello other']);

    // cancelling the running turn lets the queued one run
    const secondDone = client.waitForCount('done', 2, (e) => e.chat_id === busy);
    client.send({ type: 'cancel', chat_id: busy });
    const [firstDone, queuedDone] = await secondDone;
    expect(firstDone?.cancelled).toBe(true);
    expect(queuedDone?.cancelled).toBe(false);
    expect(bodies()).toEqual(['first', 'hello other', 'second']);
    // the second turn's model call saw the first (cancelled, partial) turn in history
    const secondMessages = (fake.completions[2]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(secondMessages.slice(1)).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'working' },
      { role: 'user', content: 'second' },
    ]);
  });

  it('Scenario: a chat accepts at most 16 waiting messages; the next one gets queue_full', async () => {
    const chatId = newChatId();
    fake.setHandler((req) => {
      const last = (req.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content;
      return last === 'blocker' ? { chunks: ['busy'], hangAfterChunks: true } : { content: 'queued answer' };
    });
    client.sendMessage(chatId, 'blocker');
    await client.waitFor('delta', (e) => e.chat_id === chatId);
    const rejected = client.next('error', (e) => e.chat_id === chatId);
    for (let i = 0; i < 17; i++) client.sendMessage(chatId, `waiting ${i}`);
    expect(await rejected).toMatchObject({ chat_id: chatId, code: 'queue_full' });
    const allDone = client.waitForCount('done', 17, (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    const done = await allDone;
    expect(done.filter((e) => e.cancelled)).toHaveLength(1);
    expect(client.ofType('error').filter((e) => e.chat_id === chatId)).toHaveLength(1);
  });

  it('Scenario: two clients attached to one chat both receive the whole turn', async () => {
    const chatId = newChatId();
    const second = await WsTestClient.connect(t.wsUrl);
    const attached = second.next('attached');
    second.send({ type: 'attach', chat_id: chatId });
    await attached;
    fake.enqueue({ content: 'shared answer' });
    const doneA = client.next('done', (e) => e.chat_id === chatId);
    const doneB = second.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'for both of you');
    await Promise.all([doneA, doneB]);
    const seenA = client.chatEvents(chatId).map((e) => e.event);
    const seenB = second.chatEvents(chatId).map((e) => e.event);
    expect(seenB).toEqual(seenA);
    expect(second.ofType('delta').map((e) => e.text).join('')).toBe('shared answer');
    await second.close();
  });

  it('Scenario: a client re-attaching during a turn learns the turn is active and gets the rest of it', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['still ', 'going'], hangAfterChunks: true });
    client.sendMessage(chatId, 'long one');
    await client.waitFor('delta', (e) => e.chat_id === chatId);
    const reconnecting = await WsTestClient.connect(t.wsUrl);
    const attached = reconnecting.next('attached');
    reconnecting.send({ type: 'attach', chat_id: chatId });
    expect(await attached).toMatchObject({ chat_id: chatId, turn_active: true });
    const done = reconnecting.next('done', (e) => e.chat_id === chatId);
    reconnecting.send({ type: 'cancel', chat_id: chatId });
    expect((await done).cancelled).toBe(true);
    await reconnecting.close();
  });

  it('Scenario: deleting a session mid-turn cancels the turn and leaves nothing on disk', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'first answer' });
    const firstDone = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'create me');
    await firstDone;
    fake.enqueue({ chunks: ['about to be deleted'], hangAfterChunks: true });
    client.sendMessage(chatId, 'hang');
    await client.waitFor('delta', (e) => e.chat_id === chatId && e.text === 'about to be deleted');
    const done = client.next('done', (e) => e.chat_id === chatId);
    const deleted = await request(t.httpUrl).delete(`/api/sessions/${chatId}`);
    expect(deleted.status).toBe(204);
    expect((await done).cancelled).toBe(true);
    await fake.waitForAbort(1);
    expect(existsSync(join(t.config.memoryDir, chatId))).toBe(false);
  });
});

describe('chat restart', () => {
  it('Scenario: a new app on the same data dir keeps the history and sends it to the model', async () => {
    const fake = await FakeModelServer.start();
    const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-restart-data-'));
    const configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-restart-config-'));
    try {
      const first = await startTestApp({ dataDir, configDir });
      await configureFakeModel(first.httpUrl, fake.baseUrl);
      const client = await WsTestClient.connect(first.wsUrl);
      fake.enqueue({ content: 'Nice to meet you, Ada.' });
      const done = client.next('done');
      client.sendMessage('restart-chat', 'My name is Ada');
      await done;
      await client.close();
      await first.close();

      const second = await startTestApp({ dataDir, configDir });
      try {
        const again = await WsTestClient.connect(second.wsUrl);
        fake.enqueue({ content: 'Your name is Ada.' });
        const events: string[] = [];
        const secondDone = again.next('done');
        again.sendMessage('restart-chat', 'What is my name?');
        await secondDone;
        events.push(...again.chatEvents('restart-chat').map((e) => e.event));
        await again.close();
        expect(events).not.toContain('session_updated');
        const messages = (fake.completions[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
        expect(messages.slice(1)).toEqual([
          { role: 'user', content: 'My name is Ada' },
          { role: 'assistant', content: 'Nice to meet you, Ada.' },
          { role: 'user', content: 'What is my name?' },
        ]);
        const list = await request(second.httpUrl).get('/api/sessions');
        expect(list.body.sessions).toEqual([expect.objectContaining({ chat_id: 'restart-chat', title: 'My name is Ada' })]);
      } finally {
        await second.close();
      }
    } finally {
      await fake.close();
      await fs.rm(dataDir, { recursive: true, force: true });
      await fs.rm(configDir, { recursive: true, force: true });
    }
  });
});
