import type { PublicMessage, ServerEvent, TurnReplayEvent } from '@cashcode/contracts';

import type { ChatState } from './chat-types';
import { historyLoaded, historyLoading } from './history-merge';
import { reduceServerEvent } from './server-events';
import { activateChat, connectionLost, userMessageSent } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const LLM = { llm: { provider: 'openai_compatible' as const, model: 'm1' } };
const delta = (text: string): ServerEvent => ({ event: 'delta', chat_id: 'c1', text, stream_id: 7 });
const replay = (text: string, extra: ServerEvent[] = []): TurnReplayEvent => ({
  event: 'turn_replay',
  chat_id: 'c1',
  stream_id: 7,
  user: { content: 'tell me', metadata: { ...LLM, mentioned_skills: [{ name: 'notes' }] } },
  events: [...extra, delta(text)],
  truncated: false,
});
const persisted: PublicMessage[] = [
  { role: 'user', content: 'earlier question' },
  { role: 'assistant', content: 'earlier answer' },
];
const apply = (state: ChatState, ...events: ServerEvent[]): ChatState => events.reduce(reduceServerEvent, state);
const contents = (state: ChatState) => state.threads['c1'].messages.map((m) => `${m.role}:${m.content}`);

describe('turn replay', () => {
  it('Scenario: after a reload the running turn is rebuilt from the replay and merged after the loaded history', () => {
    // reload: the chat opens, its history request is in flight when the replay arrives
    let state = historyLoading(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1');
    state = apply(state, { event: 'attached', chat_id: 'c1', turn_active: true }, replay('Once upon'));
    expect(contents(state)).toEqual(['user:tell me', 'assistant:Once upon']);
    expect(state.threads['c1'].messages[0].mentionedSkills).toEqual([{ name: 'notes' }]);
    expect(state.threads['c1'].generating).toBe(true);
    expect(state.threads['c1'].messages[1].streaming).toBe(true);

    state = historyLoaded(state, 'c1', persisted);
    expect(contents(state)).toEqual([
      'user:earlier question',
      'assistant:earlier answer',
      'user:tell me',
      'assistant:Once upon',
    ]);
    // live events continue the replayed answer
    state = apply(state, delta(' a time'));
    expect(contents(state).at(-1)).toBe('assistant:Once upon a time');
    // the history of a running turn is reloaded once it ends
    expect(state.threads['c1'].resync).toBe(true);
    state = apply(state, { event: 'stream_end', chat_id: 'c1', stream_id: 7 }, {
      event: 'done',
      chat_id: 'c1',
      duration_sec: 1,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      cancelled: false,
    });
    expect(state.threads['c1'].generating).toBe(false);
    // the projection now holds the turn: it replaces the live copy, without duplicates
    state = historyLoaded(state, 'c1', [
      ...persisted,
      { role: 'user', content: 'tell me' },
      { role: 'assistant', content: 'Once upon a time' },
    ]);
    expect(contents(state)).toEqual([
      'user:earlier question',
      'assistant:earlier answer',
      'user:tell me',
      'assistant:Once upon a time',
    ]);
    expect(state.threads['c1'].replayedTurn).toBeUndefined();
  });

  it('Scenario: a replay after the history loaded is appended once; a second replay replaces the first', () => {
    let state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', persisted);
    state = apply(state, replay('Once'));
    state = apply(state, replay('Once upon a'));
    expect(contents(state)).toEqual([
      'user:earlier question',
      'assistant:earlier answer',
      'user:tell me',
      'assistant:Once upon a',
    ]);
  });

  it('Scenario: a tab that reconnects mid-turn rebuilds its live turn from the replay without duplicates', () => {
    let state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', persisted);
    state = userMessageSent(state, 'c1', 'tell me', LLM);
    state = apply(state, delta('Once'));
    state = connectionLost(state);
    state = apply(state, { event: 'attached', chat_id: 'c1', turn_active: true }, replay('Once upon'));
    expect(contents(state)).toEqual([
      'user:earlier question',
      'assistant:earlier answer',
      'user:tell me',
      'assistant:Once upon',
    ]);
  });

  it('replays tool calls and keeps a finished earlier turn intact', () => {
    let state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', persisted);
    state = apply(
      state,
      replay(' done', [
        { event: 'tool_call', chat_id: 'c1', tool_name: 'read_file', stream_id: 7, call_id: 'k1', arguments: '{}' },
        { event: 'tool_result', chat_id: 'c1', tool_name: 'read_file', result: 'r', stream_id: 7, call_id: 'k1', ok: true, duration_ms: 4 },
      ]),
    );
    const answer = state.threads['c1'].messages.at(-1);
    expect(answer?.tools.map((tool) => [tool.callId, tool.status])).toEqual([['k1', 'ok']]);
    expect(answer?.content).toBe(' done');
    expect(contents(state).slice(0, 2)).toEqual(['user:earlier question', 'assistant:earlier answer']);
  });
});

describe('turn replay and stop', () => {
  it('a stop acknowledgement does not end a replayed turn: its done does', () => {
    let state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', persisted);
    state = apply(state, replay('Once'), { event: 'stop_ack', chat_id: 'c1' });
    expect(state.threads['c1'].generating).toBe(true);
    state = apply(state, {
      event: 'done',
      chat_id: 'c1',
      duration_sec: 1,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      cancelled: true,
    });
    expect(state.threads['c1'].generating).toBe(false);
    expect(state.threads['c1'].messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Once', cancelled: true });
  });
});

describe('stopped answers in the projection', () => {
  it('Scenario: Stop works on an answer replayed after a reload', () => {
    // the reload that ends a stopped replayed turn keeps the answer marked stopped
    const state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', [
      { role: 'user', content: 'tell me' },
      { role: 'assistant', content: 'Once', cancelled: true },
    ]);
    expect(state.threads['c1'].messages.map((m) => m.cancelled)).toEqual([false, true]);
  });
});
