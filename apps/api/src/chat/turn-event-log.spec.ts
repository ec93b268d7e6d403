import type { ServerEvent } from '@cashcode/contracts';
import { TurnEventLog } from './turn-event-log';

const user = { content: 'hello', metadata: { llm: { provider: 'openai_compatible' as const, model: 'm' } } };
const delta = (text: string, streamId = 7): ServerEvent => ({ event: 'delta', chat_id: 'c', text, stream_id: streamId });

describe('TurnEventLog', () => {
  it('Scenario: consecutive deltas are replayed as one delta, in order with the other events', () => {
    const log = new TurnEventLog('c', 7, user);
    log.record(delta('Hel'));
    log.record(delta('lo '));
    log.record({ event: 'tool_call', chat_id: 'c', tool_name: 't', stream_id: 7, call_id: 'a', arguments: '{}' });
    log.record({ event: 'tool_result', chat_id: 'c', tool_name: 't', result: 'r', stream_id: 7, call_id: 'a', ok: true, duration_ms: 3 });
    log.record(delta('world'));
    log.record(delta('!'));
    const replay = log.replay();
    expect(replay).toMatchObject({ event: 'turn_replay', chat_id: 'c', stream_id: 7, user, truncated: false });
    expect(replay.events.map((e) => e.event)).toEqual(['delta', 'tool_call', 'tool_result', 'delta']);
    expect(replay.events[0]).toEqual(delta('Hello '));
    expect(replay.events[3]).toEqual(delta('world!'));
  });

  it("coalesces a sub-agent's consecutive answer text, per sub-agent", () => {
    const log = new TurnEventLog('c', 7, user);
    const text = (callId: string, piece: string): ServerEvent => ({
      event: 'subagent_event',
      chat_id: 'c',
      stream_id: 7,
      call_id: callId,
      inner: { event: 'delta', text: piece },
    });
    log.record(text('d1', 'Hel'));
    log.record(text('d1', 'lo'));
    log.record(text('d2', 'Other'));
    log.record(text('d1', '!'));
    expect(log.replay().events).toEqual([text('d1', 'Hello'), text('d2', 'Other'), text('d1', '!')]);
  });

  it('keeps only the last progress report of a tool call, where the first one was', () => {
    const log = new TurnEventLog('c', 7, user);
    log.record({ event: 'tool_call', chat_id: 'c', tool_name: 't', stream_id: 7, call_id: 'a', arguments: '{}' });
    for (let i = 1; i <= 50; i++) {
      log.record({ event: 'tool_progress', chat_id: 'c', call_id: 'a', tool_name: 't', stream_id: 7, progress: i, total: 50 });
    }
    log.record(delta('x'));
    const events = log.replay().events;
    expect(events.map((e) => e.event)).toEqual(['tool_call', 'tool_progress', 'delta']);
    expect(events[1]).toMatchObject({ progress: 50, total: 50 });
  });

  it('leaves out what the caller sends on its own', () => {
    const log = new TurnEventLog('c', 7, user);
    log.record({ event: 'warning', chat_id: 'c', code: 'skill_not_found', subject: 'skill', name: 's', detail: 'd' });
    log.record(delta('a'));
    const events = log.replay((event) => event.event === 'warning').events;
    expect(events).toEqual([delta('a')]);
  });

  it('Scenario: a turn log past its cap stops recording and the replay says truncated', () => {
    const log = new TurnEventLog('c', 7, user, 1200);
    log.record(delta('a'.repeat(500)));
    log.record(delta('b'.repeat(400)));
    expect(log.truncated).toBe(false);
    const sizeBefore = log.size;
    log.record(delta('c'.repeat(400)));
    log.record({ event: 'stream_end', chat_id: 'c', stream_id: 7 });
    expect(log.truncated).toBe(true);
    expect(log.size).toBe(sizeBefore);
    expect(log.size).toBeLessThanOrEqual(1200);
    const replay = log.replay();
    expect(replay.truncated).toBe(true);
    expect(replay.events).toEqual([delta('a'.repeat(500) + 'b'.repeat(400))]);
  });

  it('counts UTF-8 bytes', () => {
    const log = new TurnEventLog('c', 7, user, 10_000);
    const start = log.size;
    log.record(delta('x'));
    const afterFirst = log.size;
    log.record(delta('你好'));
    expect(afterFirst).toBeGreaterThan(start);
    expect(log.size - afterFirst).toBe(6);
  });
});
