/**
 * Server events about the connection, the chat and its turn as a whole: `ready` and `attached` (which chat is open),
 * `session_updated`, the streamed answer (`delta`, `stream_end`), and how the turn ends (`done`, `error`, `stop_ack`)
 * or what it ran without (`warning`). A thread that was generating when the connection dropped is re-synced (its
 * history reloaded) once the turn is known to have ended.
 */
import type { WarningEvent } from '@cashcode/contracts';

import { applyDoneStats } from './answer-stats';
import { forgetSentDecisions } from './approval-state';
import { assignCursors } from './chat-actions-state';
import type { ChatMessage, ChatThread, TurnWarning } from './chat-types';
import type { ServerEventHandlers } from './server-event-handler';
import { activateChat, isPersisted, upsertSession } from './session-reducers';
import { endTurn, mapTools, withStreamingAssistant, withThread } from './thread-updates';

/**
 * Error codes of a failed model call: the server keeps the user message with an error marker, so the error is shown
 * inline under that message (with Retry) instead of as a banner.
 */
export const PERSISTED_TURN_ERROR_CODES: ReadonlySet<string> = new Set([
  'auth',
  'rate_limit',
  'quota',
  'timeout',
  'context_length',
  'transient',
  'fatal',
  // a model call refused by a spend limit is kept the same way (Retry once the limit resets)
  'spend_limit_reached',
  // a turn the runaway guard stopped (the model kept calling tools after it was told to answer)
  'runaway_stopped',
]);

/** Errors answering an `approval` frame (the call was settled meanwhile, or the decision could not be applied). */
const APPROVAL_ERROR_CODES: ReadonlySet<string> = new Set(['unknown_approval', 'approval_failed']);
/** Errors answering an `elicitation` frame: the form stays open (or was settled meanwhile). */
const ELICITATION_ERROR_CODES: ReadonlySet<string> = new Set(['invalid_elicitation', 'unknown_elicitation']);

export const TURN_EVENT_HANDLERS: ServerEventHandlers = {
  ready: (state, event) => {
    // A fresh connection: its default chat (new, nothing on disk) opens when nothing is open yet, or when a new
    // chat was asked for and its `attached` cannot come any more (asked before the socket was open, or on a
    // connection that dropped): the default chat is that new chat.
    if (state.pendingNewChat) return activateChat({ ...state, pendingNewChat: false }, event.chat_id, true);
    return state.activeChatId === null ? activateChat(state, event.chat_id, true) : state;
  },

  attached: (state, event) => {
    // the answer to `new_chat` names a fresh chat; one for a chat this console already holds answers a re-attach (sent
    // on `ready` for the open chat), which can arrive after New chat was pressed and must not stand in for it
    if (state.pendingNewChat && state.threads[event.chat_id] === undefined) {
      return activateChat({ ...state, pendingNewChat: false }, event.chat_id, !isPersisted(state, event.chat_id));
    }
    let next = state.threads[event.chat_id] ? state : withThread(state, event.chat_id, (thread) => thread);
    const thread = next.threads[event.chat_id];
    if (event.turn_active === false && thread.generating) {
      // The turn we were showing ended while we were offline: stop waiting and reload what was persisted.
      let nextId = next.nextMessageId;
      next = withThread(next, event.chat_id, (current) => ({
        ...endTurn(current, false, () => nextId++),
        resync: true,
      }));
      next = { ...next, nextMessageId: nextId };
    }
    return next;
  },

  session_updated: (state, event) => {
    const next = upsertSession(state, {
      chat_id: event.chat_id,
      title: event.title,
      updated_at: event.updated_at,
    });
    return next.activeChatId === null ? activateChat(next, event.chat_id, true) : next;
  },

  delta: (state, event) =>
    withStreamingAssistant(state, event.chat_id, (message) => ({
      ...message,
      content: message.content + (typeof event.text === 'string' ? event.text : ''),
    })),

  // the model's reasoning: kept apart from the answer text, shown collapsed above it
  reasoning: (state, event) =>
    withStreamingAssistant(state, event.chat_id, (message) => ({
      ...message,
      reasoning: (message.reasoning ?? '') + (typeof event.text === 'string' ? event.text : ''),
    })),

  stream_end: (state, event) =>
    withThread(state, event.chat_id, (thread) =>
      thread.messages.some((message) => message.streaming)
        ? {
            ...thread,
            messages: thread.messages.map((message) => (message.streaming ? { ...message, streaming: false } : message)),
          }
        : thread,
    ),

  done: (state, event) => {
    let nextId = state.nextMessageId;
    const next = withThread(state, event.chat_id, (thread) =>
      applyDoneStats(
        assignCursors(
          endTurn({ ...thread, error: null }, event.cancelled === true, () => nextId++),
          event.user_cursor,
          event.answer_cursor,
        ),
        event,
      ),
    );
    return { ...next, nextMessageId: nextId };
  },

  error: (state, event) => {
    const chatId = typeof event.chat_id === 'string' ? event.chat_id : null;
    if (chatId === null) {
      const next = { ...state, banner: event.detail };
      if (next.activeChatId === null || !next.threads[next.activeChatId]?.generating) return next;
      let nextId = next.nextMessageId;
      const ended = withThread(next, next.activeChatId, (thread) => endTurn(thread, false, () => nextId++));
      return { ...ended, nextMessageId: nextId };
    }
    if (event.code !== undefined && ELICITATION_ERROR_CODES.has(event.code)) {
      return withThread(state, chatId, (thread) => ({
        ...mapTools(thread, (tool) =>
          tool.elicitation?.status === 'sent' ? { ...tool, elicitation: { ...tool.elicitation, status: 'open' } } : tool,
        ),
        error: event.detail,
      }));
    }
    if (event.code !== undefined && APPROVAL_ERROR_CODES.has(event.code)) {
      // a refused approval frame does not end the turn: the card can be answered again (or is settled already)
      return withThread(state, chatId, (thread) => ({ ...forgetSentDecisions(thread), error: event.detail }));
    }
    let nextId = state.nextMessageId;
    const next = withThread(state, chatId, (thread) => {
      const ended = endTurn(thread, false, () => nextId++);
      const last = ended.messages[ended.messages.length - 1];
      if (event.code !== undefined && PERSISTED_TURN_ERROR_CODES.has(event.code) && last?.role === 'user') {
        // the unanswered prompt stays, with the error inline under it (the server kept it the same way)
        const marked: ChatMessage = { ...last, error: { kind: event.code, message: event.detail } };
        return { ...ended, messages: [...ended.messages.slice(0, -1), marked], error: null };
      }
      return { ...ended, error: event.detail };
    });
    return { ...next, nextMessageId: nextId };
  },

  warning: (state, event) => withThread(state, event.chat_id, (thread) => warnLastUserMessage(thread, event)),

  // After a reconnect we cannot tell whether the turn still runs; a stop acknowledgement ends the wait.
  // (a replayed turn is known to run: its `done` follows)
  stop_ack: (state, event) =>
    state.threads[event.chat_id]?.resync &&
    state.threads[event.chat_id].generating &&
    state.threads[event.chat_id].replayedTurn === undefined
      ? withThread(state, event.chat_id, (thread) => endTurn(thread, false, () => 0))
      : state,
};

/** Adds a warning to the newest user message of the thread (the turn it belongs to); a repeat changes nothing. */
function warnLastUserMessage(thread: ChatThread, event: WarningEvent): ChatThread {
  let index = thread.messages.length - 1;
  while (index >= 0 && thread.messages[index].role !== 'user') index--;
  if (index < 0) return thread;
  const message = thread.messages[index];
  const warning: TurnWarning = { subject: event.subject, name: event.name, code: event.code, detail: event.detail };
  const known = message.warnings ?? [];
  if (known.some((w) => w.subject === warning.subject && w.name === warning.name)) return thread;
  const messages = [...thread.messages];
  messages[index] = { ...message, warnings: [...known, warning] };
  return { ...thread, messages };
}
