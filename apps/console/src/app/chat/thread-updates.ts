/**
 * The small immutable updates every chat transition is built from: the initial state, a thread replaced by its
 * updated copy, the streaming assistant message a live event belongs to, the end of a turn, and a change to every
 * tool block. Pure functions over the types of chat-types.ts.
 */
import { cancelPendingApproval, isPending } from './approval-state';
import type { ChatMessage, ChatState, ChatThread, HistoryStatus, ToolBlockState } from './chat-types';
import type { ElicitationStatus } from './tool-live-state';

export const INITIAL_CHAT_STATE: ChatState = {
  sessions: [],
  activeChatId: null,
  threads: {},
  banner: null,
  pendingNewChat: false,
  nextMessageId: 1,
};

export function emptyThread(chatId: string, history: HistoryStatus = 'idle'): ChatThread {
  return { chatId, messages: [], history, historyError: null, generating: false, error: null, resync: false };
}

export function withThread(state: ChatState, chatId: string, update: (thread: ChatThread) => ChatThread): ChatState {
  const current = state.threads[chatId] ?? emptyThread(chatId);
  return { ...state, threads: { ...state.threads, [chatId]: update(current) } };
}

/** The assistant message a streaming event belongs to: the last one if it is streaming, else a new one. */
export function withStreamingAssistant(
  state: ChatState,
  chatId: string,
  update: (message: ChatMessage) => ChatMessage,
): ChatState {
  let nextId = state.nextMessageId;
  const next = withThread(state, chatId, (thread) => {
    const messages = [...thread.messages];
    const last = messages[messages.length - 1];
    if (last && last.role === 'assistant' && last.streaming) {
      messages[messages.length - 1] = update(last);
    } else {
      const created: ChatMessage = {
        id: nextId++,
        role: 'assistant',
        content: '',
        streaming: true,
        tools: [],
        cancelled: false,
      };
      messages.push(update(created));
    }
    return { ...thread, messages };
  });
  return { ...next, nextMessageId: nextId };
}

function isUnsettled(tool: ToolBlockState): boolean {
  return tool.status === 'running' || tool.status === 'awaiting' || isPending(tool.approval);
}

function settleRunningTools(tools: ToolBlockState[]): ToolBlockState[] {
  return tools.some(isUnsettled)
    ? tools.map((tool) => {
        const settled = cancelPendingApproval(tool);
        return settled.status === 'running' ? { ...settled, status: 'interrupted' } : settled;
      })
    : tools;
}

/** Ends the turn of a chat: nothing streams or runs any more; optionally marks the answer cancelled. */
export function endTurn(thread: ChatThread, cancelled: boolean, nextId: () => number): ChatThread {
  const messages = thread.messages.map((message) =>
    message.streaming || message.tools.some(isUnsettled)
      ? { ...message, streaming: false, tools: settleRunningTools(message.tools) }
      : message,
  );
  if (cancelled) {
    const last = messages[messages.length - 1];
    if (last && last.role === 'assistant') {
      messages[messages.length - 1] = { ...last, cancelled: true };
    } else {
      messages.push({ id: nextId(), role: 'assistant', content: '', streaming: false, tools: [], cancelled: true });
    }
  }
  return { ...thread, messages, generating: false };
}

/** The thread with `update` applied to every tool block (unchanged blocks keep their identity). */
export function mapTools(thread: ChatThread, update: (tool: ToolBlockState) => ToolBlockState): ChatThread {
  let changed = false;
  const messages = thread.messages.map((message) => {
    const tools = message.tools.map((tool) => {
      const next = update(tool);
      if (next !== tool) changed = true;
      return next;
    });
    return tools.some((tool, i) => tool !== message.tools[i]) ? { ...message, tools } : message;
  });
  return changed ? { ...thread, messages } : thread;
}

export function setElicitationStatus(thread: ChatThread, id: string, status: ElicitationStatus): ChatThread {
  return mapTools(thread, (tool) =>
    tool.elicitation?.id === id ? { ...tool, elicitation: { ...tool.elicitation, status } } : tool,
  );
}

export function nullableString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
