/**
 * Replay of a running turn (openspec chat "Requirement: Replay of a running turn"): a connection that attaches to a chat
 * while its turn streams gets `turn_replay` (the user message and the turn's events so far) and then the live events,
 * with no gap and no duplicate; pending approvals still follow as standalone requests and can be answered.
 */
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient, type EventOf } from './support/ws-client';

const exec = (id: string, command: string) => ({ id, name: 'exec', arguments: JSON.stringify({ command }) });

/** The answer text a client can rebuild: the replay's deltas, then the live deltas after it. */
function rebuiltText(events: ServerEvent[], chatId: string): string {
  let text = '';
  for (const event of events) {
    if (event.event === 'turn_replay' && event.chat_id === chatId) {
      for (const replayed of event.events) if (replayed.event === 'delta') text += replayed.text;
    } else if (event.event === 'delta' && event.chat_id === chatId) {
      text += event.text;
    }
  }
  return text;
}

describe('replay of a running turn (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let sender: WsTestClient;
  let chatCounter = 0;
  const newChatId = () => `replay-chat-${++chatCounter}`;
  const others: WsTestClient[] = [];

  async function attachNew(chatId: string): Promise<WsTestClient> {
    const client = await WsTestClient.connect(t.wsUrl);
    others.push(client);
    client.send({ type: 'attach', chat_id: chatId });
    await client.waitFor('attached', (e) => e.chat_id === chatId);
    return client;
  }

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
    sender = await WsTestClient.connect(t.wsUrl);
  });
  afterEach(async () => {
    await sender?.close();
    for (const client of others.splice(0)) await client.close();
  });

  it('Scenario: attaching mid-stream replays the turn from its start, then the live events, once each', async () => {
    const chatId = newChatId();
    const chunks = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'slow ', 'answer.'];
    fake.enqueue({ chunks, chunkDelayMs: 120 });
    sender.sendMessage(chatId, 'tell me a story');
    await sender.waitForCount('delta', 2, (e) => e.chat_id === chatId);

    const first = await attachNew(chatId);
    const attached = await first.waitFor('attached', (e) => e.chat_id === chatId);
    expect(attached.turn_active).toBe(true);
    const replay = await first.waitFor('turn_replay', (e) => e.chat_id === chatId);
    expect(replay.user).toEqual({
      content: 'tell me a story',
      metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' } },
    });
    expect(replay.truncated).toBe(false);
    // deltas so far coalesced into one, after the title update of this first turn
    expect(replay.events.map((e) => e.event)).toEqual(['session_updated', 'delta']);
    expect((replay.events[1] as EventOf<'delta'>).text.length).toBeGreaterThan(0);
    // the replay comes right after `attached`, before any live event of this connection
    const index = first.events.indexOf(replay);
    expect(first.events[index - 1]).toBe(attached);

    // a second connection in parallel, later in the stream
    await sender.waitForCount('delta', 5, (e) => e.chat_id === chatId);
    const second = await attachNew(chatId);

    const full = chunks.join('');
    await Promise.all([sender, first, second].map((client) => client.waitFor('done', (e) => e.chat_id === chatId)));
    expect(rebuiltText(sender.events, chatId)).toBe(full);
    expect(rebuiltText(first.events, chatId)).toBe(full);
    expect(rebuiltText(second.events, chatId)).toBe(full);
    const secondReplay = second.ofType('turn_replay')[0];
    expect(secondReplay.stream_id).toBe(replay.stream_id);
    expect((secondReplay.events.find((e) => e.event === 'delta') as EventOf<'delta'>).text.length).toBeGreaterThan(
      (replay.events[1] as EventOf<'delta'>).text.length,
    );
    for (const client of [first, second]) {
      expect(client.ofType('stream_end').filter((e) => e.chat_id === chatId)).toHaveLength(1);
      expect(client.ofType('done').filter((e) => e.chat_id === chatId)).toHaveLength(1);
    }
  });

  it('Scenario: no replay when no turn runs', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'short' });
    sender.sendMessage(chatId, 'hi');
    await sender.waitFor('done', (e) => e.chat_id === chatId);
    const late = await attachNew(chatId);
    const attached = await late.waitFor('attached', (e) => e.chat_id === chatId);
    expect(attached.turn_active).toBe(false);
    late.send({ type: 'ping' });
    await late.waitFor('pong');
    expect(late.ofType('turn_replay')).toHaveLength(0);
  });

  it('Scenario: a pending approval is replayed to a connection that attaches, once, and can be answered', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Let me look. ', toolCalls: [exec('rp1', 'echo replay')] }, { content: 'All done.' });
    sender.sendMessage(chatId, 'run it');
    await sender.waitFor('approval_request', (e) => e.call_id === 'rp1');

    const late = await attachNew(chatId);
    const replay = await late.waitFor('turn_replay', (e) => e.chat_id === chatId);
    expect(replay.user.content).toBe('run it');
    const replayed = replay.events.map((e) => e.event);
    expect(replayed).toContain('delta');
    expect(replayed).not.toContain('approval_request');
    const asked = await late.waitFor('approval_request', (e) => e.call_id === 'rp1');
    expect(late.events.indexOf(asked)).toBeGreaterThan(late.events.indexOf(replay));
    expect(asked.tool).toBe('exec');

    late.send({ type: 'approval', chat_id: chatId, call_id: 'rp1', decision: 'allow_once' });
    await late.waitFor('done', (e) => e.chat_id === chatId);
    expect(late.ofType('approval_request').filter((e) => e.call_id === 'rp1')).toHaveLength(1);
    expect(late.ofType('approval_resolved').filter((e) => e.call_id === 'rp1')).toHaveLength(1);
    expect(late.ofType('tool_result').filter((e) => e.call_id === 'rp1')).toHaveLength(1);
    expect(rebuiltText(late.events, chatId)).toBe('Let me look. All done.');
    expect(rebuiltText(sender.events, chatId)).toBe('Let me look. All done.');
  });

  it('Scenario: a resolved approval is part of the replay of a turn that still runs', async () => {
    const chatId = newChatId();
    fake.enqueue(
      { toolCalls: [exec('rp2', 'echo first')] },
      { chunks: ['Still ', 'going ', 'on ', 'and ', 'on.'], chunkDelayMs: 150 },
    );
    sender.sendMessage(chatId, 'two steps');
    await sender.waitFor('approval_request', (e) => e.call_id === 'rp2');
    sender.send({ type: 'approval', chat_id: chatId, call_id: 'rp2', decision: 'allow_once' });
    await sender.waitForCount('delta', 2, (e) => e.chat_id === chatId);

    const late = await attachNew(chatId);
    const replay = await late.waitFor('turn_replay', (e) => e.chat_id === chatId);
    const replayed = replay.events.map((e) => e.event);
    expect(replayed.indexOf('approval_request')).toBeLessThan(replayed.indexOf('approval_resolved'));
    expect(replayed).toContain('tool_result');
    await late.waitFor('done', (e) => e.chat_id === chatId);
    expect(late.ofType('approval_request')).toHaveLength(0);
    expect(rebuiltText(late.events, chatId)).toBe('Still going on and on.');
  });

  it('Scenario: a connection that sends to a chat with a running turn gets its replay first', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['One ', 'two ', 'three ', 'four.'], chunkDelayMs: 150 }, { content: 'Second answer.' });
    sender.sendMessage(chatId, 'count');
    await sender.waitForCount('delta', 1, (e) => e.chat_id === chatId);
    const other = await WsTestClient.connect(t.wsUrl);
    others.push(other);
    other.sendMessage(chatId, 'then this');
    const replay = await other.waitFor('turn_replay', (e) => e.chat_id === chatId);
    expect(replay.user.content).toBe('count');
    await other.waitForCount('done', 2, (e) => e.chat_id === chatId);
    expect(rebuiltText(other.events, chatId)).toBe('One two three four.Second answer.');
    // the queued turn that follows is not replayed again to a connection that already follows the chat
    expect(other.ofType('turn_replay')).toHaveLength(1);
  });
});
