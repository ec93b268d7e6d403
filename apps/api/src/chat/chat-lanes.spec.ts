/**
 * The per-chat lanes with a hand-driven executor: each turn ends when the test resolves (or rejects) it.
 */
import { ChatLanes, MAX_QUEUED_TURNS_PER_CHAT, type RunningTurn, type TurnJob } from './chat-lanes';

const LLM = { provider: 'openai_compatible', model: 'm' } as const;

function job(chatId: string, content: string): TurnJob {
  return { chatId, content, metadata: { llm: LLM } };
}

interface Started {
  job: TurnJob;
  running: RunningTurn;
  end(): void;
  crash(): void;
}

function lanesUnderTest(): { lanes: ChatLanes; started: Started[] } {
  const started: Started[] = [];
  const lanes = new ChatLanes(
    (turn, running) =>
      new Promise<void>((resolve, reject) => {
        started.push({ job: turn, running, end: resolve, crash: () => reject(new Error('boom')) });
      }),
  );
  return { lanes, started };
}

/** lets the lane's `finally` and the next drain run */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ChatLanes', () => {
  it('runs the turns of one chat one after another and different chats at once', async () => {
    const { lanes, started } = lanesUnderTest();
    expect(lanes.enqueue(job('a', '1'))).toEqual({ accepted: true, queued: 1 });
    expect(lanes.enqueue(job('a', '2'))).toEqual({ accepted: true, queued: 1 });
    lanes.enqueue(job('b', '1'));
    expect(started.map((s) => `${s.job.chatId}${s.job.content}`)).toEqual(['a1', 'b1']);
    expect(lanes.runningTurns).toBe(2);
    expect(lanes.busy('a')).toBe(true);
    started[0]!.end();
    await settle();
    expect(started.map((s) => `${s.job.chatId}${s.job.content}`)).toEqual(['a1', 'b1', 'a2']);
    started[1]!.end();
    started[2]!.end();
    await settle();
    expect(lanes.runningTurns).toBe(0);
    expect(lanes.busy('a')).toBe(false);
    expect(lanes.isRunning('b')).toBe(false);
  });

  it('a crashed turn does not block the next turn of its chat', async () => {
    const { lanes, started } = lanesUnderTest();
    lanes.enqueue(job('a', '1'));
    lanes.enqueue(job('a', '2'));
    started[0]!.crash();
    await settle();
    expect(started).toHaveLength(2);
    expect(lanes.isRunning('a')).toBe(true);
  });

  it('refuses a message beyond the bounded queue', () => {
    const { lanes } = lanesUnderTest();
    lanes.enqueue(job('a', 'running'));
    for (let i = 0; i < MAX_QUEUED_TURNS_PER_CHAT; i++) expect(lanes.enqueue(job('a', `${i}`)).accepted).toBe(true);
    expect(lanes.enqueue(job('a', 'one too many'))).toMatchObject({ accepted: false, code: 'queue_full' });
    expect(lanes.enqueue(job('b', 'other chat')).accepted).toBe(true);
  });

  it('cancel aborts the running turn only; a deleted chat also loses its queued turns', async () => {
    const { lanes, started } = lanesUnderTest();
    expect(lanes.abort('a', 'client')).toBe(false);
    lanes.enqueue(job('a', '1'));
    lanes.enqueue(job('a', '2'));
    lanes.enqueue(job('a', '3'));
    expect(lanes.abort('a', 'client')).toBe(true);
    expect(started[0]!.running.controller.signal.aborted).toBe(true);
    expect(started[0]!.running.cause).toBe('client');
    started[0]!.end();
    await settle();
    expect(started.map((s) => s.job.content)).toEqual(['1', '2']);
    lanes.drop('a');
    expect(started[1]!.running.cause).toBe('deleted');
    started[1]!.end();
    await settle();
    expect(started).toHaveLength(2);
    expect(lanes.busy('a')).toBe(false);
  });

  it('closing aborts every running turn, waits for it and refuses new messages', async () => {
    const { lanes, started } = lanesUnderTest();
    lanes.enqueue(job('a', '1'));
    lanes.enqueue(job('a', '2'));
    const closed = lanes.close();
    expect(started[0]!.running.cause).toBe('shutdown');
    expect(lanes.enqueue(job('b', '1'))).toMatchObject({ accepted: false, code: 'shutting_down' });
    started[0]!.end();
    await closed;
    expect(started).toHaveLength(1);
    expect(lanes.closed).toBe(true);
  });
});
