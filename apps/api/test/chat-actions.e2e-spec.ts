/**
 * Chat actions through the real gateway against the fake model (openspec chat "Requirement: Chat actions", sessions
 * "Requirement: Regenerate, edit and continue"): regenerate, edit and resend, continue after stop, the bad inputs, and
 * that history.jsonl stays append-only while the projection and the model context follow the current branch.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { CONTINUE_INSTRUCTION } from '../src/chat/chat-actions';
import { HistoryLogStore } from '../src/memory/history-log.store';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, eventNamesCollapsed, joinedDeltas, WsTestClient } from './support/ws-client';

const llm = { provider: 'openai_compatible', model: 'fake-model' };

interface Body {
  messages: Array<{ role: string; content: string | null }>;
}
const conversation = (r: RecordedRequest | undefined) =>
  (r?.body as Body).messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);

async function readHistory(t: TestApp, chatId: string): Promise<Array<Record<string, unknown>>> {
  const text = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('chat actions', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `action-chat-${++counter}`;

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

  /** Runs `send` and resolves with the chat's events up to `done` or `error`. */
  async function run(chatId: string, send: () => void): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    send();
    await end;
    return client.chatEvents(chatId).slice(before);
  }
  const message = (chatId: string, content: string) => run(chatId, () => client.sendMessage(chatId, content));
  const action = (chatId: string, fields: Record<string, unknown>) =>
    run(chatId, () => client.send({ type: 'chat_action', chat_id: chatId, metadata: { llm }, ...fields }));

  async function projection(chatId: string): Promise<Array<{ role: string; content: string; cursor: number; cancelled?: boolean }>> {
    const res = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`);
    expect(res.status).toBe(200);
    return res.body.messages;
  }

  it('Scenario: regenerate replaces the last answer and keeps the old one on disk', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Answer one' });
    await message(chatId, 'First question');
    fake.enqueue({ content: 'Answer two' });
    const first = await message(chatId, 'Second question');
    const firstDone = first.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    expect(firstDone).toMatchObject({ event: 'done', user_cursor: 3, answer_cursor: 4 });

    fake.enqueue({ chunks: ['Answer two, ', 'again'] });
    const events = await action(chatId, { action: 'regenerate' });
    expect(eventNamesCollapsed(events)).toEqual(['delta', 'stream_end', 'done']);
    expect(events.at(-1)).toMatchObject({ cancelled: false, user_cursor: 5, answer_cursor: 6 });
    // the model is asked with the history before the regenerated message, then that message again
    expect(conversation(fake.completions[2])).toEqual([
      ['user', 'First question'],
      ['assistant', 'Answer one'],
      ['user', 'Second question'],
    ]);
    expect((await projection(chatId)).map((m) => [m.role, m.content, m.cursor])).toEqual([
      ['user', 'First question', 1],
      ['assistant', 'Answer one', 2],
      ['user', 'Second question', 5],
      ['assistant', 'Answer two, again', 6],
    ]);
    const history = await readHistory(t, chatId);
    expect(history.map((r) => r['content'])).toEqual([
      'First question',
      'Answer one',
      'Second question',
      'Answer two',
      'Second question',
      'Answer two, again',
    ]);
    expect(history[4]).toMatchObject({ role: 'user', supersedes: 3 });

    // the next turn's context is the current branch only
    fake.enqueue({ content: 'Third answer' });
    await message(chatId, 'Third question');
    expect(conversation(fake.completions[3])).toEqual([
      ['user', 'First question'],
      ['assistant', 'Answer one'],
      ['user', 'Second question'],
      ['assistant', 'Answer two, again'],
      ['user', 'Third question'],
    ]);
  });

  it('Scenario: edit and resend replaces a sent message and everything after it', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Paris' });
    await message(chatId, 'Capital of France?');
    fake.enqueue({ content: 'Berlin' });
    await message(chatId, 'And Germany?');

    fake.enqueue({ content: 'Madrid' });
    const events = await action(chatId, { action: 'edit', cursor: 1, content: 'Capital of Spain?' });
    expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false, user_cursor: 5, answer_cursor: 6 });
    expect(conversation(fake.completions[2])).toEqual([['user', 'Capital of Spain?']]);
    expect((await projection(chatId)).map((m) => [m.content, m.cursor])).toEqual([
      ['Capital of Spain?', 5],
      ['Madrid', 6],
    ]);
    expect(await readHistory(t, chatId)).toHaveLength(6);
    // survives a restart of the cached state: the next turn sees the edited branch
    t.app.get(HistoryLogStore).forgetChat(chatId);
    fake.enqueue({ content: 'ok' });
    await message(chatId, 'Thanks');
    expect(conversation(fake.completions[3])).toEqual([
      ['user', 'Capital of Spain?'],
      ['assistant', 'Madrid'],
      ['user', 'Thanks'],
    ]);
  });

  it('Scenario: continue after stop appends to the stopped answer', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['Once upon ', 'a time'], hangAfterChunks: true });
    client.sendMessage(chatId, 'Tell a story');
    await client.waitForText(chatId, 'Once upon a time');
    const stopped = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    expect((await stopped).cancelled).toBe(true);

    fake.enqueue({ chunks: [' there was', ' a fox.'] });
    const events = await action(chatId, { action: 'continue' });
    // the deltas carry only the new text
    expect(joinedDeltas(events)).toBe(' there was a fox.');
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    expect(done).toMatchObject({ event: 'done', cancelled: false, answer_cursor: 3 });
    expect(done.user_cursor).toBeUndefined();
    // the model got the partial answer as the last assistant message and the instruction
    expect(conversation(fake.completions[1])).toEqual([
      ['user', 'Tell a story'],
      ['assistant', 'Once upon a time'],
      ['user', CONTINUE_INSTRUCTION],
    ]);
    const shown = await projection(chatId);
    expect(shown.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Tell a story'],
      ['assistant', 'Once upon a time there was a fox.'],
    ]);
    expect(shown[1]!.cancelled).toBeUndefined();
    const history = await readHistory(t, chatId);
    expect(history).toEqual([
      expect.objectContaining({ cursor: 1, role: 'user' }),
      expect.objectContaining({ cursor: 2, role: 'assistant', content: 'Once upon a time', cancelled: true }),
      expect.objectContaining({ cursor: 3, role: 'assistant', content: 'Once upon a time there was a fox.', supersedes: 2 }),
    ]);
    // the instruction is never persisted, and the continued answer is not continuable again
    const again = await action(chatId, { action: 'continue' });
    expect(again.at(-1)).toMatchObject({ event: 'error', code: 'nothing_to_continue' });
  });

  it('Scenario: the projection keeps each answer\'s usage and duration after a reload', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Counted.', usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
    const events = await message(chatId, 'Count my tokens');
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    fake.enqueue({ content: 'Uncounted.', omitUsage: true });
    await message(chatId, 'And these?');
    // a reload: the cached chat is dropped, the projection is read from disk
    t.app.get(HistoryLogStore).forgetChat(chatId);
    const res = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200);
    const answers = (res.body.messages as Array<Record<string, unknown>>).filter((m) => m['role'] === 'assistant');
    expect(answers[0]).toMatchObject({ usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
    expect(answers[0]!['duration_ms']).toEqual(expect.any(Number));
    expect(answers[0]!['duration_ms'] as number).toBeLessThanOrEqual(done.duration_sec * 1000 + 1);
    // unknown usage: duration only
    expect(answers[1]!['usage']).toBeUndefined();
    expect(answers[1]!['duration_ms']).toEqual(expect.any(Number));
    const history = await readHistory(t, chatId);
    expect(history[1]).toMatchObject({ role: 'assistant', usage: { total_tokens: 19 } });
    // usage is never sent to the model
    expect(JSON.stringify(fake.completions[1]?.body)).not.toContain('total_tokens');
  });

  it('Scenario: a continued answer keeps its continuation\'s usage and both durations', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['Part one'], hangAfterChunks: true });
    client.sendMessage(chatId, 'Go');
    await client.next('delta', (e) => e.chat_id === chatId);
    const stopped = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    await stopped;
    fake.enqueue({ content: ', part two.', usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } });
    await action(chatId, { action: 'continue' });
    const history = await readHistory(t, chatId);
    // the stopped part reported no usage (the stream was cut): the continuation's own counts, both durations
    expect(history[1]!['usage']).toBeUndefined();
    expect(history[2]).toMatchObject({ usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } });
    expect(history[2]!['duration_ms'] as number).toBeGreaterThanOrEqual(history[1]!['duration_ms'] as number);
  });

  it('Scenario: chat actions with a bad target are refused with a clear error', async () => {
    const chatId = newChatId();
    const empty = await action(chatId, { action: 'regenerate' });
    expect(empty).toEqual([expect.objectContaining({ event: 'error', chat_id: chatId, code: 'nothing_to_regenerate' })]);

    fake.enqueue({ content: 'Hi' });
    await message(chatId, 'Hello');
    for (const cursor of [2, 42]) {
      const bad = await action(chatId, { action: 'edit', cursor, content: 'x' });
      expect(bad).toEqual([expect.objectContaining({ event: 'error', code: 'invalid_target' })]);
    }
    expect((await action(chatId, { action: 'continue' })).at(-1)).toMatchObject({ code: 'nothing_to_continue' });
    expect((await action(chatId, { action: 'edit', cursor: 1, content: ' ' })).at(-1)).toMatchObject({
      code: 'missing_content',
    });
    expect((await action(chatId, { action: 'redo' })).at(-1)).toMatchObject({ code: 'invalid_frame' });
    // nothing was written by the refused actions, no model call made
    expect(await readHistory(t, chatId)).toHaveLength(2);
    expect(fake.completions).toHaveLength(1);
  });

  it('Scenario: a chat action while a turn runs is refused', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Hi' });
    await message(chatId, 'Hello');
    fake.enqueue({ chunks: ['slow'], hangAfterChunks: true });
    client.sendMessage(chatId, 'Long one');
    await client.next('delta', (e) => e.chat_id === chatId);
    const refused = client.next('error', (e) => e.chat_id === chatId);
    client.send({ type: 'chat_action', chat_id: chatId, action: 'regenerate', metadata: { llm } });
    expect(await refused).toMatchObject({ code: 'turn_running' });
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    await done;
    expect(fake.completions).toHaveLength(2);
  });

  it('Scenario: a failed regenerate keeps the replaced message with its error', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Hi' });
    await message(chatId, 'Hello');
    fake.enqueue({ status: 401 });
    const events = await action(chatId, { action: 'regenerate' });
    expect(events.at(-1)).toMatchObject({ event: 'error', code: 'auth' });
    const shown = await projection(chatId);
    expect(shown).toEqual([expect.objectContaining({ role: 'user', content: 'Hello', cursor: 3, error: expect.objectContaining({ kind: 'auth' }) })]);
    // a retry (regenerate again) answers it
    fake.enqueue({ content: 'Hi again' });
    await action(chatId, { action: 'regenerate' });
    expect((await projection(chatId)).map((m) => m.content)).toEqual(['Hello', 'Hi again']);
    expect(conversation(fake.completions[2])).toEqual([['user', 'Hello']]);
  });
});
