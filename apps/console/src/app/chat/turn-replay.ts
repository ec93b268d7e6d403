/**
 * `turn_replay`: the server sends a running turn from its start (after a reload, in a second tab, after a reconnect).
 * The turn this thread already shows live (from the replayed or the last user message on, while generating) is
 * rebuilt from the replay: the user message, then each replayed event as if it had arrived live. History reloads when
 * the turn ends. The replayed events go through the same reducer as live ones, which the caller passes in.
 */
import type { MessageMetadata, ServerEvent, TurnReplayEvent } from '@cashcode/contracts';

import type { ChatState } from './chat-types';
import { userMessageSent } from './session-reducers';
import { emptyThread, withThread } from './thread-updates';

const NO_METADATA = { llm: { provider: 'openai_compatible', model: '' } } as const satisfies MessageMetadata;

export function applyTurnReplay(
  state: ChatState,
  event: TurnReplayEvent,
  reduce: (state: ChatState, event: ServerEvent) => ChatState,
): ChatState {
  const chatId = event.chat_id;
  const current = state.threads[chatId] ?? emptyThread(chatId);
  let start = current.messages.length;
  if (current.generating) {
    const replayed = current.messages.findIndex((message) => message.id === current.replayedTurn);
    let last = current.messages.length - 1;
    while (last >= 0 && current.messages[last].role !== 'user') last--;
    if (replayed >= 0) start = replayed;
    else if (last >= 0) start = last;
  }
  const replayedTurn = state.nextMessageId;
  let next = withThread(state, chatId, (thread) => ({ ...thread, messages: thread.messages.slice(0, start) }));
  next = userMessageSent(next, chatId, String(event.user?.content ?? ''), event.user?.metadata ?? NO_METADATA);
  for (const replayed of Array.isArray(event.events) ? event.events : []) {
    if (replayed.event === 'turn_replay' || !('chat_id' in replayed) || replayed.chat_id !== chatId) continue;
    next = reduce(next, replayed);
  }
  return withThread(next, chatId, (thread) => ({ ...thread, generating: true, resync: true, replayedTurn }));
}
