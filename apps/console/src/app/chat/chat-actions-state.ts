/**
 * The everyday actions on a chat (regenerate, edit and resend, continue after stop) as pure transitions of a thread,
 * applied by the ChatStore once the `chat_action` frame is sent. Like a sent message they are optimistic; a refusal
 * (CHAT_ACTION_REFUSALS) makes the store reload the persisted history.
 */
import type { ChatActionFrame, LlmSelection } from '@cashcode/contracts';

import type { ChatMessage, ChatState, ChatThread } from './chat-types';

/** `error` codes by which the server refuses an action before anything ran: the thread is reloaded. */
export const CHAT_ACTION_REFUSALS: ReadonlySet<string> = new Set([
  'turn_running',
  'nothing_to_regenerate',
  'invalid_target',
  'nothing_to_continue',
]);

function lastIndexOf(messages: readonly ChatMessage[], role: ChatMessage['role']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === role) return i;
  return -1;
}

/** The actions a thread offers now (nothing while a turn runs). */
export function availableActions(thread: ChatThread | null): {
  regenerateId: number | null;
  continueId: number | null;
  editable: (message: ChatMessage) => boolean;
} {
  const idle = thread !== null && !thread.generating && thread.history === 'loaded';
  const messages = thread?.messages ?? [];
  const last = messages[messages.length - 1];
  const lastUser = lastIndexOf(messages, 'user');
  return {
    // the last answer (or a failed last message has Retry instead)
    regenerateId: idle && last?.role === 'assistant' && lastUser >= 0 ? last.id : null,
    continueId: idle && last?.role === 'assistant' && (last.cancelled || last.truncated === true) ? last.id : null,
    editable: (message) => idle && message.role === 'user' && typeof message.cursor === 'number',
  };
}

export function chatActionFrame(
  chatId: string,
  selection: LlmSelection,
  action: ChatActionFrame['action'],
  edit?: { cursor: number; content: string },
): ChatActionFrame {
  const frame: ChatActionFrame = {
    type: 'chat_action',
    chat_id: chatId,
    action,
    metadata: { llm: { provider: selection.provider, model: selection.model } },
  };
  if (edit) {
    frame.cursor = edit.cursor;
    frame.content = edit.content;
  }
  return frame;
}

function withThread(state: ChatState, chatId: string, update: (thread: ChatThread) => ChatThread): ChatState {
  const thread = state.threads[chatId];
  return thread ? { ...state, threads: { ...state.threads, [chatId]: update(thread) } } : state;
}

/** Regenerate sent: the answer after the last user message goes; the new one streams in its place. */
export function regenerateSent(state: ChatState, chatId: string): ChatState {
  return withThread(state, chatId, (thread) => {
    const index = lastIndexOf(thread.messages, 'user');
    if (index < 0) return thread;
    const user: ChatMessage = { ...thread.messages[index], warnings: undefined, error: undefined, cursor: undefined };
    return { ...thread, messages: [...thread.messages.slice(0, index), user], generating: true, error: null };
  });
}

/** Edit sent: the message takes the new text (its cursor is unknown until `done`), everything after it goes. */
export function editSent(state: ChatState, chatId: string, messageId: number, content: string): ChatState {
  return withThread(state, chatId, (thread) => {
    const index = thread.messages.findIndex((message) => message.id === messageId);
    if (index < 0) return thread;
    const edited: ChatMessage = {
      ...thread.messages[index],
      content,
      warnings: undefined,
      error: undefined,
      loadedSkills: undefined,
      cursor: undefined,
    };
    return { ...thread, messages: [...thread.messages.slice(0, index), edited], generating: true, error: null };
  });
}

/** Continue sent: the stopped answer streams again; the new text is appended to it. */
export function continueSent(state: ChatState, chatId: string): ChatState {
  return withThread(state, chatId, (thread) => {
    const last = thread.messages[thread.messages.length - 1];
    if (!last || last.role !== 'assistant') return thread;
    const resumed: ChatMessage = { ...last, streaming: true, cancelled: false, truncated: undefined, resumed: true };
    return { ...thread, messages: [...thread.messages.slice(0, -1), resumed], generating: true, error: null };
  });
}

/** `done` names the cursors of what the turn persisted: the last user message and the answer take them. */
export function assignCursors(thread: ChatThread, userCursor: unknown, answerCursor: unknown): ChatThread {
  if (typeof userCursor !== 'number' && typeof answerCursor !== 'number') return thread;
  const messages = [...thread.messages];
  const user = lastIndexOf(messages, 'user');
  const answer = lastIndexOf(messages, 'assistant');
  if (typeof userCursor === 'number' && user >= 0) messages[user] = { ...messages[user], cursor: userCursor };
  if (typeof answerCursor === 'number' && answer > user) messages[answer] = { ...messages[answer], cursor: answerCursor };
  return { ...thread, messages };
}
