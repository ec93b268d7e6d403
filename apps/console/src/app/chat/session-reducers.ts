/**
 * Transitions the console itself starts (not server events): the sessions list, the open chat, an optimistic user
 * message, a sent approval or elicitation answer, dismissing an error, and a dropped connection. The ChatStore applies
 * them to its state around the frames and REST calls it makes; each is pure.
 *
 * Fixes over the original Python server's console: a thread that was generating when the connection dropped is
 * flagged for re-sync once it is re-attached.
 */
import type { ApprovalDecision, AttachmentReceipt, MessageMetadata, SessionSummary } from '@cashcode/contracts';

import { approvalSent, forgetSentDecisions, pendingApprovalBlocks } from './approval-state';
import type { ChatMessage, ChatState, ChatThread } from './chat-types';
import { emptyThread, setElicitationStatus, withThread } from './thread-updates';

export function isPersisted(state: ChatState, chatId: string): boolean {
  return state.sessions.some((session) => session.chat_id === chatId);
}

/** Makes `chatId` the open chat; its thread is created (history not loaded yet unless `loaded`). */
export function activateChat(state: ChatState, chatId: string, loaded = false): ChatState {
  const existing = state.threads[chatId];
  const thread = existing ?? emptyThread(chatId, loaded ? 'loaded' : 'idle');
  return { ...state, activeChatId: chatId, threads: { ...state.threads, [chatId]: thread } };
}

export function sessionsLoaded(state: ChatState, sessions: SessionSummary[]): ChatState {
  const next = { ...state, sessions };
  // the latest session opens when nothing is open, unless a new chat was asked for meanwhile (the list can arrive
  // after the click on New chat: it must not send the next message into another chat)
  if (next.activeChatId === null && !next.pendingNewChat && sessions.length > 0) return activateChat(next, sessions[0].chat_id);
  return next;
}

/** A session changed (title, time): it moves to the top, keeping what the event does not carry (its channel). */
export function upsertSession(state: ChatState, session: SessionSummary): ChatState {
  const known = state.sessions.find((entry) => entry.chat_id === session.chat_id);
  const rest = state.sessions.filter((entry) => entry.chat_id !== session.chat_id);
  const merged = known?.channel && !session.channel ? { ...session, channel: known.channel } : session;
  return { ...state, sessions: [merged, ...rest] };
}

export function sessionRenamed(state: ChatState, chatId: string, title: string): ChatState {
  return {
    ...state,
    sessions: state.sessions.map((entry) => (entry.chat_id === chatId ? { ...entry, title } : entry)),
  };
}

/** Removes a deleted session; when it was open, the first remaining session becomes active. */
export function sessionRemoved(state: ChatState, chatId: string): ChatState {
  const sessions = state.sessions.filter((entry) => entry.chat_id !== chatId);
  const threads = { ...state.threads };
  delete threads[chatId];
  const next: ChatState = { ...state, sessions, threads };
  if (state.activeChatId !== chatId) return next;
  if (sessions.length === 0) return { ...next, activeChatId: null };
  return activateChat({ ...next, activeChatId: null }, sessions[0].chat_id);
}

/** Optimistic user message after a frame was sent; the chat is generating from now on. */
export function userMessageSent(
  state: ChatState,
  chatId: string,
  content: string,
  metadata: MessageMetadata,
  attachments: readonly AttachmentReceipt[] = [],
): ChatState {
  const message: ChatMessage = {
    id: state.nextMessageId,
    role: 'user',
    content,
    streaming: false,
    tools: [],
    cancelled: false,
  };
  if (metadata.mentioned_skills?.length) message.mentionedSkills = metadata.mentioned_skills;
  if (metadata.selected_mcp_connectors?.length) message.selectedMcpConnectors = metadata.selected_mcp_connectors;
  if (attachments.length > 0) message.attachments = attachments.map((attachment) => ({ ...attachment }));
  const next = { ...state, nextMessageId: state.nextMessageId + 1 };
  return withThread(next, chatId, (thread) => ({
    ...thread,
    messages: [...thread.messages, message],
    generating: true,
    error: null,
  }));
}

export function newChatRequested(state: ChatState): ChatState {
  return { ...state, pendingNewChat: true };
}

export function dismissError(state: ChatState, chatId: string | null): ChatState {
  if (chatId === null) return { ...state, banner: null };
  return withThread(state, chatId, (thread) => ({ ...thread, error: null }));
}

/** The connection dropped: threads that were generating may miss events until re-attached. */
export function connectionLost(state: ChatState): ChatState {
  let changed = false;
  const threads: Record<string, ChatThread> = {};
  for (const [chatId, original] of Object.entries(state.threads)) {
    const thread = forgetSentDecisions(original);
    if (thread.generating && !thread.resync) {
      threads[chatId] = { ...thread, resync: true };
      changed = true;
    } else {
      threads[chatId] = thread;
      changed ||= thread !== original;
    }
  }
  return changed ? { ...state, threads } : state;
}

/** Chats to re-attach after a (re)connect: the open one and every chat still generating. */
export function chatsToReattach(state: ChatState): string[] {
  const ids = new Set<string>();
  if (state.activeChatId !== null) ids.add(state.activeChatId);
  for (const thread of Object.values(state.threads)) if (thread.generating) ids.add(thread.chatId);
  return [...ids];
}

/** The user answered an elicitation form and the frame was sent. */
export function elicitationAnswerSent(state: ChatState, chatId: string, id: string): ChatState {
  return withThread(state, chatId, (thread) => setElicitationStatus(thread, id, 'sent'));
}

/** The user answered an approval card and the frame was sent. */
export function approvalDecisionSent(state: ChatState, chatId: string, callId: string, decision: ApprovalDecision): ChatState {
  const thread = state.threads[chatId];
  if (!thread) return state;
  const next = approvalSent(thread, callId, decision);
  return next === thread ? state : { ...state, threads: { ...state.threads, [chatId]: next } };
}

/** Chats with an approval waiting for the user (the sidebar marks them). */
export function chatsAwaitingApproval(state: ChatState): string[] {
  return Object.values(state.threads)
    .filter((thread) => pendingApprovalBlocks(thread).length > 0)
    .map((thread) => thread.chatId);
}
