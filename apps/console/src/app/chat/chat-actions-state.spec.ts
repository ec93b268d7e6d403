import type { ServerEvent } from '@cashcode/contracts';

import { availableActions, chatActionFrame, continueSent, editSent, regenerateSent } from './chat-actions-state';
import type { ChatState } from './chat-types';
import { historyLoaded } from './history-merge';
import { reduceServerEvent } from './server-events';
import { activateChat } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const done = (extra: Partial<Extract<ServerEvent, { event: 'done' }>> = {}): ServerEvent => ({
  event: 'done',
  chat_id: 'c1',
  duration_sec: 1,
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  cancelled: false,
  ...extra,
});

function loaded(): ChatState {
  const state = activateChat(INITIAL_CHAT_STATE, 'c1', true);
  return historyLoaded(state, 'c1', [
    { role: 'user', content: 'first', cursor: 1 },
    { role: 'assistant', content: 'one', cursor: 2 },
    { role: 'user', content: 'second', cursor: 3 },
    { role: 'assistant', content: 'two (partial', cursor: 4, cancelled: true },
  ]);
}

describe('chat actions state', () => {
  it('Scenario: the actions offered follow the chat (Regenerate and Continue on the last answer, Edit on persisted messages)', () => {
    const state = loaded();
    const thread = state.threads['c1'];
    const actions = availableActions(thread);
    const [first, , second, last] = thread.messages;
    expect(actions.regenerateId).toBe(last.id);
    expect(actions.continueId).toBe(last.id);
    expect(actions.editable(first)).toBe(true);
    expect(actions.editable(second)).toBe(true);
    expect(actions.editable(last)).toBe(false);
    // nothing while a turn runs
    const busy = availableActions({ ...thread, generating: true });
    expect([busy.regenerateId, busy.continueId, busy.editable(first)]).toEqual([null, null, false]);
    // a finished last answer is not continuable
    const finished = historyLoaded(state, 'c1', [
      { role: 'user', content: 'q', cursor: 1 },
      { role: 'assistant', content: 'a', cursor: 2 },
    ]);
    expect(availableActions(finished.threads['c1']).continueId).toBeNull();
  });

  it('regenerate drops the last answer and waits for the new one; done gives the new cursors', () => {
    let state = regenerateSent(loaded(), 'c1');
    let thread = state.threads['c1'];
    expect(thread.generating).toBe(true);
    expect(thread.messages.map((m) => m.content)).toEqual(['first', 'one', 'second']);
    expect(thread.messages[2].cursor).toBeUndefined();
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: 'two again', stream_id: 1 });
    state = reduceServerEvent(state, done({ user_cursor: 5, answer_cursor: 6 }));
    thread = state.threads['c1'];
    expect(thread.messages.map((m) => [m.content, m.cursor])).toEqual([
      ['first', 1],
      ['one', 2],
      ['second', 5],
      ['two again', 6],
    ]);
  });

  it('edit replaces the message text and drops what followed it', () => {
    const before = loaded();
    const firstId = before.threads['c1'].messages[0].id;
    const thread = editSent(before, 'c1', firstId, 'first, edited').threads['c1'];
    expect(thread.messages.map((m) => m.content)).toEqual(['first, edited']);
    expect(thread.messages[0].id).toBe(firstId);
    expect(thread.generating).toBe(true);
  });

  it('continue streams into the stopped answer', () => {
    let state = continueSent(loaded(), 'c1');
    expect(state.threads['c1'].messages.at(-1)).toMatchObject({ streaming: true, cancelled: false });
    state = reduceServerEvent(state, { event: 'delta', chat_id: 'c1', text: ') and the rest.', stream_id: 1 });
    state = reduceServerEvent(state, done({ answer_cursor: 5 }));
    const messages = state.threads['c1'].messages;
    expect(messages).toHaveLength(4);
    expect(messages[3]).toMatchObject({ content: 'two (partial) and the rest.', cancelled: false, cursor: 5 });
    expect(messages[2].cursor).toBe(3);
  });

  it('builds the chat_action frame', () => {
    const selection = { provider: 'ollama' as const, model: 'llama' };
    expect(chatActionFrame('c1', selection, 'edit', { cursor: 3, content: 'x' })).toEqual({
      type: 'chat_action',
      chat_id: 'c1',
      action: 'edit',
      cursor: 3,
      content: 'x',
      metadata: { llm: selection },
    });
    expect(chatActionFrame('c1', selection, 'continue')).toEqual({
      type: 'chat_action',
      chat_id: 'c1',
      action: 'continue',
      metadata: { llm: selection },
    });
  });
});
