/**
 * Messages typed while an answer streams (openspec console "Requirement: Composer while streaming"): queued per chat,
 * removable, and sent one at a time when the chat's turn ends with `done` (answered or stopped). A turn that ends with
 * an error pauses the queue: the messages stay until the user sends or removes them. Pure functions; the page holds
 * the state in a signal.
 */
import type { AttachmentReceipt } from '@cashcode/contracts';
import type { CapabilitySelections } from './capability-picker/capability-rules';

export interface QueuedMessage {
  id: number;
  text: string;
  selections: CapabilitySelections;
  /** the files uploaded with it (already on the server) */
  attachments?: readonly AttachmentReceipt[];
}

export interface MessageQueueState {
  byChat: Readonly<Record<string, readonly QueuedMessage[]>>;
  nextId: number;
}

export const EMPTY_QUEUE: MessageQueueState = { byChat: {}, nextId: 1 };

export function queuedFor(state: MessageQueueState, chatId: string | null): readonly QueuedMessage[] {
  return chatId === null ? [] : (state.byChat[chatId] ?? []);
}

export function enqueueMessage(
  state: MessageQueueState,
  chatId: string,
  text: string,
  selections: CapabilitySelections,
  attachments: readonly AttachmentReceipt[] = [],
): MessageQueueState {
  const message: QueuedMessage = { id: state.nextId, text, selections, ...(attachments.length > 0 ? { attachments } : {}) };
  return { byChat: { ...state.byChat, [chatId]: [...queuedFor(state, chatId), message] }, nextId: state.nextId + 1 };
}

export function removeQueued(state: MessageQueueState, chatId: string, id: number): MessageQueueState {
  const current = queuedFor(state, chatId);
  const rest = current.filter((message) => message.id !== id);
  if (rest.length === current.length) return state;
  const byChat = { ...state.byChat };
  if (rest.length === 0) delete byChat[chatId];
  else byChat[chatId] = rest;
  return { ...state, byChat };
}

/** How the chat's turn ended, from what the page sees when it stops generating. */
export type TurnEnding = 'done' | 'error';

/** The message to send now that the chat's turn ended, or null (nothing queued, or the turn failed: paused). */
export function nextToSend(state: MessageQueueState, chatId: string, ending: TurnEnding): QueuedMessage | null {
  if (ending === 'error') return null;
  return queuedFor(state, chatId)[0] ?? null;
}
