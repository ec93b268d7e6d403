import { ChatSubscriptions, SLOW_CLIENT_CLOSE_CODE, type ChatConnection } from './subscriptions';

class FakeConnection implements ChatConnection {
  readonly sent: string[] = [];
  readonly urgent: boolean[] = [];
  bufferedAmount = 0;
  open = true;
  closed: { code: number; reason: string } | null = null;

  constructor(readonly clientId: string) {}

  send(text: string, urgent: boolean): void {
    this.sent.push(text);
    this.urgent.push(urgent);
  }

  close(code: number, reason: string): void {
    this.closed = { code, reason };
    this.open = false;
  }
}

describe(ChatSubscriptions.name, () => {
  it('Scenario: every connection of a chat receives its events; other chats do not', () => {
    const subs = new ChatSubscriptions();
    const a = new FakeConnection('a');
    const b = new FakeConnection('b');
    const c = new FakeConnection('c');
    subs.subscribe(a, 'chat-1');
    subs.subscribe(b, 'chat-1');
    subs.subscribe(c, 'chat-2');
    expect(subs.publish('chat-1', { event: 'stop_ack', chat_id: 'chat-1' })).toBe(2);
    expect(a.sent).toEqual(['{"event":"stop_ack","chat_id":"chat-1"}']);
    expect(b.sent).toHaveLength(1);
    expect(c.sent).toHaveLength(0);
  });

  it('Scenario: only deltas are urgent; other events go out with the rest of their tick', () => {
    const subs = new ChatSubscriptions();
    const a = new FakeConnection('a');
    subs.subscribe(a, 'chat-1');
    subs.publish('chat-1', { event: 'delta', chat_id: 'chat-1', text: 'Hi', stream_id: 1 });
    subs.publish('chat-1', { event: 'stream_end', chat_id: 'chat-1', stream_id: 1 });
    subs.send(a, { event: 'pong' });
    expect(a.urgent).toEqual([true, false, false]);
  });

  it('Scenario: events of a chat without subscribers are dropped; close removes subscriptions', () => {
    const subs = new ChatSubscriptions();
    const a = new FakeConnection('a');
    subs.subscribe(a, 'chat-1');
    subs.subscribe(a, 'chat-2');
    subs.unsubscribeAll(a);
    expect(subs.publish('chat-1', { event: 'pong' })).toBe(0);
    expect(subs.subscriberCount('chat-1')).toBe(0);
    expect(subs.subscriberCount('chat-2')).toBe(0);
  });

  it('Scenario: a client that stopped reading is closed instead of buffering without bound', () => {
    const slow: ChatConnection[] = [];
    const subs = new ChatSubscriptions(1000, (connection) => slow.push(connection));
    const fast = new FakeConnection('fast');
    const stuck = new FakeConnection('stuck');
    subs.subscribe(fast, 'chat-1');
    subs.subscribe(stuck, 'chat-1');
    stuck.bufferedAmount = 5000;
    expect(subs.publish('chat-1', { event: 'pong' })).toBe(1);
    expect(stuck.closed?.code).toBe(SLOW_CLIENT_CLOSE_CODE);
    expect(slow).toEqual([stuck]);
    expect(subs.subscriberCount('chat-1')).toBe(1);
    expect(subs.publish('chat-1', { event: 'pong' })).toBe(1);
    expect(fast.sent).toHaveLength(2);
  });
});
