import type { ServerEvent } from '@cashcode/contracts';

import { applyDoneStats, chatTotals, formatSeconds, reportedUsage } from './answer-stats';
import { continueSent } from './chat-actions-state';
import type { ChatMessage } from './chat-types';
import { historyLoaded } from './history-merge';
import { reduceServerEvent } from './server-events';
import { activateChat, userMessageSent } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const LLM = { llm: { provider: 'openai_compatible' as const, model: 'm1' } };
const done = (usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_tokens?: number }, seconds: number): ServerEvent => ({
  event: 'done',
  chat_id: 'c1',
  duration_sec: seconds,
  usage,
  cancelled: false,
});

describe('answer stats', () => {
  it('Scenario: each answer takes the tokens and duration of its done; unknown usage keeps the duration only', () => {
    let state = userMessageSent(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', 'hi', LLM);
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: 'hello', stream_id: 1 });
    state = reduceServerEvent(state, done({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }, 1.25));
    expect(state.threads['c1'].messages[1]).toMatchObject({
      usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
      durationMs: 1250,
    });
    state = userMessageSent(state, 'c1', 'again', LLM);
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: 'x', stream_id: 2 });
    state = reduceServerEvent(state, done({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, 0.5));
    const second = state.threads['c1'].messages[3];
    expect(second.usage).toBeUndefined();
    expect(second.durationMs).toBe(500);
    expect(chatTotals(state.threads['c1'].messages)).toEqual({
      tokens: 19,
      promptTokens: 12,
      completionTokens: 7,
      durationMs: 1750,
      answers: 2,
    });
  });

  it('Scenario: the per-chat total adds up the answers shown, also after a reload', () => {
    const state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b', usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }, duration_ms: 900 },
      { role: 'user', content: 'c' },
      { role: 'assistant', content: 'd', duration_ms: 100 },
      // malformed usage from an old or foreign server is ignored
      { role: 'assistant', content: 'e', usage: { prompt_tokens: -1 } as never },
    ]);
    const messages = state.threads['c1'].messages;
    expect(messages[4].usage).toBeUndefined();
    expect(chatTotals(messages)).toEqual({ tokens: 7, promptTokens: 5, completionTokens: 2, durationMs: 1000, answers: 2 });
  });

  it('a continued answer adds the continuation to its stats', () => {
    let state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a', cursor: 1 },
      { role: 'assistant', content: 'part', cancelled: true, duration_ms: 400, usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, cursor: 2 },
    ]);
    state = continueSent(state, 'c1');
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: ' two', stream_id: 3 });
    state = reduceServerEvent(state, done({ prompt_tokens: 6, completion_tokens: 2, total_tokens: 8 }, 0.6));
    const answer: ChatMessage = state.threads['c1'].messages[1];
    expect(answer).toMatchObject({ content: 'part two', durationMs: 1000, usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } });
    expect(answer.resumed).toBeUndefined();
  });

  it('Scenario: an answer shows its cost, or "no price" when its model has none', () => {
    let state = userMessageSent(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', 'hi', LLM);
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: 'priced', stream_id: 1 });
    state = reduceServerEvent(state, { ...done({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, 1), cost: { amount: 0.0021, currency: 'USD' } } as ServerEvent);
    expect(state.threads['c1'].messages[1].cost).toEqual({ amount: 0.0021, currency: 'USD' });
    state = userMessageSent(state, 'c1', 'again', LLM);
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: 'unpriced', stream_id: 2 });
    // no `cost` on done: the model has no price (the answer shows its tokens and "no price")
    state = reduceServerEvent(state, done({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, 1));
    expect(state.threads['c1'].messages[3].usage).toBeDefined();
    expect(state.threads['c1'].messages[3].cost).toBeUndefined();

    // after a reload the projection's `cost` comes back; a malformed one is ignored
    const loaded = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a', cursor: 1 },
      { role: 'assistant', content: 'b', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, cost: { amount: 0.5, currency: 'EUR' }, cursor: 2 },
      { role: 'assistant', content: 'c', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, cost: { amount: 'lots', currency: 'EUR' } as never },
    ]);
    expect(loaded.threads['c1'].messages[1].cost).toEqual({ amount: 0.5, currency: 'EUR' });
    expect(loaded.threads['c1'].messages[2].cost).toBeUndefined();

    // a continued answer adds the continuation's cost
    const stopped = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a', cursor: 1 },
      { role: 'assistant', content: 'b', cancelled: true, usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, cost: { amount: 0.5, currency: 'EUR' }, cursor: 2 },
    ]);
    let continued = continueSent(stopped, 'c1');
    continued = reduceServerEvent(continued, { event: 'delta', chat_id: 'c1', text: ' more', stream_id: 3 });
    continued = reduceServerEvent(continued, { ...done({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, 0.2), cost: { amount: 0.25, currency: 'EUR' } } as ServerEvent);
    expect(continued.threads['c1'].messages.at(-1)?.cost).toEqual({ amount: 0.75, currency: 'EUR' });
    // a stopped part without a price leaves the whole answer without one (as the server stores it)
    let unpricedPart = continueSent(historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a', cursor: 1 },
      { role: 'assistant', content: 'b', cancelled: true, usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, cursor: 2 },
    ]), 'c1');
    unpricedPart = reduceServerEvent(unpricedPart, { event: 'delta', chat_id: 'c1', text: ' more', stream_id: 4 });
    unpricedPart = reduceServerEvent(unpricedPart, { ...done({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, 0.2), cost: { amount: 0.25, currency: 'EUR' } } as ServerEvent);
    expect(unpricedPart.threads['c1'].messages.at(-1)?.cost).toBeUndefined();
  });

  it('formats durations and recognises reported usage', () => {
    expect([formatSeconds(800), formatSeconds(12_440), formatSeconds(75_400)]).toEqual(['0.8', '12.4', '75']);
    expect(reportedUsage(null)).toBeNull();
    expect(reportedUsage({ prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 })).toEqual({
      prompt_tokens: 1,
      completion_tokens: 0,
      total_tokens: 1,
    });
    const thread = activateChat(INITIAL_CHAT_STATE, 'c1', true).threads['c1'];
    expect(applyDoneStats(thread, done({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, 1) as never)).toBe(thread);
  });

  it('Scenario: an answer shows the prompt tokens the provider served from its cache', () => {
    expect(reportedUsage({ prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, cached_tokens: 100 })).toEqual({
      prompt_tokens: 120,
      completion_tokens: 45,
      total_tokens: 165,
      cached_tokens: 100,
    });
    // a malformed count is unknown, the rest of the usage stays
    expect(reportedUsage({ prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, cached_tokens: -3 })).not.toHaveProperty('cached_tokens');
    // a continued answer adds the continuation's cached tokens to the stopped part's
    let continued = continueSent(historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', [
      { role: 'user', content: 'a', cursor: 1 },
      { role: 'assistant', content: 'b', cancelled: true, usage: { prompt_tokens: 300, completion_tokens: 1, total_tokens: 301, cached_tokens: 256 }, cursor: 2 },
    ]), 'c1');
    continued = reduceServerEvent(continued, { event: 'delta', chat_id: 'c1', text: ' more', stream_id: 4 });
    continued = reduceServerEvent(continued, done({ prompt_tokens: 310, completion_tokens: 2, total_tokens: 312, cached_tokens: 300 }, 0.2) as ServerEvent);
    expect(continued.threads['c1'].messages.at(-1)?.usage).toEqual({ prompt_tokens: 610, completion_tokens: 3, total_tokens: 613, cached_tokens: 556 });
  });
});
