/**
 * Chat feature state and its pure transitions. The ChatStore holds one ChatState in a signal and applies these
 * functions; side effects (frames, REST calls) stay in the store, so everything here is unit-testable.
 *
 * Fixes over the original Python server's console: tool blocks are keyed by `call_id`, and a thread that was generating
 * when the connection dropped is flagged for re-sync once it is re-attached.
 */
import type {
  ApprovalDecision,
  AttachmentReceipt,
  LoadedSkillReceipt,
  McpConnectorReceipt,
  MessageMetadata,
  Money,
  PublicMessage,
  PublicToolRecord,
  PublicTurnError,
  ServerEvent,
  WarningEvent,
  SessionSummary,
  SkillReceipt,
  TokenUsage,
  TurnReplayEvent,
} from '@cashcode/contracts';

import {
  approvalSent,
  blockFromRequest,
  cancelPendingApproval,
  forgetSentDecisions,
  isPending,
  keepPendingApprovals,
  pendingApprovalBlocks,
  requestOnKnownCall,
  resolveApproval,
  type ApprovalState,
} from './approval-state';
import { assignCursors } from './chat-actions-state';
import { applyDoneStats, reportedUsage } from './answer-stats';
import { isMoney } from '../usage/usage-format';
import { normalizeAttachments } from './attachments/attachment-rules';
import { normalizeLoadedSkills, normalizePersistedReceipts } from './capability-picker/capability-rules';
import { elicitationCard, type ElicitationCardState, type ElicitationStatus, type ToolProgressState } from './tool-live-state';

/** `awaiting`: the call waits for the user's approval; `denied`: it was refused (by the user, a policy or the timer). */
export type ToolStatus = 'awaiting' | 'running' | 'ok' | 'error' | 'interrupted' | 'denied';

export interface ToolBlockState {
  callId: string;
  streamId: number;
  name: string;
  /** redacted, truncated JSON text from the server ('' when the server sent none) */
  arguments: string;
  status: ToolStatus;
  durationMs: number | null;
  result: string | null;
  /** the call needed the user's approval (open or settled) */
  approval?: ApprovalState;
  /** the server's last progress report while the call runs */
  progress?: ToolProgressState;
  /** an MCP server asked the user for input during the call */
  elicitation?: ElicitationCardState;
}

export interface ChatMessage {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  streaming: boolean;
  tools: ToolBlockState[];
  /** the turn was stopped by the user (done.cancelled) */
  cancelled: boolean;
  mentionedSkills?: SkillReceipt[];
  selectedMcpConnectors?: McpConnectorReceipt[];
  /** user rows of loaded history: Skills loaded for that turn (shown as small chips, never as assistant bubbles) */
  loadedSkills?: LoadedSkillReceipt[];
  /** user rows: the turn of this message failed (shown inline under it, with Retry); kept in history by the server */
  error?: PublicTurnError;
  /** user rows (live only): selections the turn ran without (`warning` events), shown as warning chips */
  warnings?: TurnWarning[];
  /** the history cursor of the persisted record (from the projection or `done`): the target of Edit */
  cursor?: number;
  /** assistant rows: the turn's token usage, when the provider reported it */
  usage?: TokenUsage;
  /** assistant rows: the turn's cost from the price table (absent with a usage: the model has no price) */
  cost?: Money;
  /** assistant rows: how long the turn took */
  durationMs?: number;
  /** assistant rows: a stopped answer being continued (its `done` adds to the stats) */
  resumed?: boolean;
  /** user rows: the uploaded files the message referred to */
  attachments?: AttachmentReceipt[];
}

/** A selected Skill or MCP connector the turn ran without. */
export type TurnWarning = Omit<WarningEvent, 'event' | 'chat_id'>;

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
]);

/**
 * Whether a persisted call failed: its `ok`, or for a record written before `ok` was kept (`ok: null`) the server's
 * own rule on the text (a result starting with `Error`).
 */
function recordFailed(tool: PublicToolRecord, result: string): boolean {
  return tool.ok === false || (tool.ok !== true && result.trimStart().startsWith('Error'));
}

/** A persisted tool call of loaded history as the same block a live turn shows. */
export function toolBlockFromRecord(tool: PublicToolRecord): ToolBlockState {
  const result = typeof tool.result_preview === 'string' ? tool.result_preview : null;
  return {
    callId: String(tool.call_id ?? ''),
    streamId: 0,
    name: String(tool.name ?? ''),
    arguments: typeof tool.arguments === 'string' ? tool.arguments : '',
    status: result === null ? 'interrupted' : recordFailed(tool, result) ? 'error' : 'ok',
    durationMs: typeof tool.duration_ms === 'number' ? tool.duration_ms : null,
    result,
  };
}

export type HistoryStatus = 'idle' | 'loading' | 'loaded' | 'failed';

export interface ChatThread {
  chatId: string;
  messages: ChatMessage[];
  history: HistoryStatus;
  historyError: string | null;
  generating: boolean;
  /** inline error banner for this chat (turn or validation error) */
  error: string | null;
  /** a turn may have progressed while we were disconnected: reload history when it ends */
  resync: boolean;
  /**
   * id of the user message of a running turn rebuilt from `turn_replay`: that message and everything after it are the
   * live turn, kept after the persisted history (which does not hold the turn yet) until the turn ends
   */
  replayedTurn?: number;
}

export interface ChatState {
  sessions: SessionSummary[];
  activeChatId: string | null;
  threads: Record<string, ChatThread>;
  /** errors that belong to no chat (bad envelope, invalid attach) */
  banner: string | null;
  /** a new_chat frame is in flight: the next `attached` opens that chat */
  pendingNewChat: boolean;
  nextMessageId: number;
}

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

function withThread(state: ChatState, chatId: string, update: (thread: ChatThread) => ChatThread): ChatState {
  const current = state.threads[chatId] ?? emptyThread(chatId);
  return { ...state, threads: { ...state.threads, [chatId]: update(current) } };
}

function isPersisted(state: ChatState, chatId: string): boolean {
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

export function upsertSession(state: ChatState, session: SessionSummary): ChatState {
  const rest = state.sessions.filter((entry) => entry.chat_id !== session.chat_id);
  return { ...state, sessions: [session, ...rest] };
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

export function historyLoading(state: ChatState, chatId: string): ChatState {
  return withThread(state, chatId, (thread) => ({ ...thread, history: 'loading', historyError: null }));
}

/** History arrived: persisted messages replace the local copy. */
export function historyLoaded(state: ChatState, chatId: string, messages: PublicMessage[]): ChatState {
  let nextId = state.nextMessageId;
  const mapped: ChatMessage[] = messages.map((message) => {
    const receipts = message.role === 'user' ? normalizePersistedReceipts(message) : {};
    const loadedSkills = message.role === 'user' ? normalizeLoadedSkills(message.loaded_skills) : [];
    const row: ChatMessage = {
      id: nextId++,
      role: message.role,
      content: String(message.content ?? ''),
      streaming: false,
      tools: message.role === 'assistant' && Array.isArray(message.tools) ? message.tools.map(toolBlockFromRecord) : [],
      // a stopped answer stays marked after a reload (and after the reload that ends a replayed turn)
      cancelled: message.role === 'assistant' && message.cancelled === true,
    };
    if (typeof message.cursor === 'number') row.cursor = message.cursor;
    if (message.role === 'assistant') {
      const usage = reportedUsage(message.usage);
      if (usage) row.usage = usage;
      if (isMoney(message.cost)) row.cost = message.cost;
      if (typeof message.duration_ms === 'number') row.durationMs = message.duration_ms;
    }
    if (message.role === 'user' && message.error && typeof message.error.message === 'string') {
      row.error = { kind: String(message.error.kind ?? ''), message: message.error.message };
    }
    if (receipts.mentioned_skills) row.mentionedSkills = receipts.mentioned_skills;
    if (receipts.selected_mcp_connectors) row.selectedMcpConnectors = receipts.selected_mcp_connectors;
    if (loadedSkills.length > 0) row.loadedSkills = loadedSkills;
    const attachments = message.role === 'user' ? normalizeAttachments(message.attachments) : [];
    if (attachments.length > 0) row.attachments = attachments;
    return row;
  });
  const live = liveTurnMessages(state.threads[chatId]);
  if (live.length > 0) {
    // a running turn replayed by the server: the projection does not hold it yet; reload once it ends
    return withThread({ ...state, nextMessageId: nextId }, chatId, (thread) => ({
      ...thread,
      messages: [...mapped, ...live],
      history: 'loaded',
      historyError: null,
      resync: true,
    }));
  }
  const kept = keepPendingApprovals(state.threads[chatId], mapped, nextId);
  if (kept !== mapped) nextId++;
  const next = { ...state, nextMessageId: nextId };
  return withThread(next, chatId, (thread) => {
    const loaded: ChatThread = { ...thread, messages: kept, history: 'loaded', historyError: null, resync: false };
    delete loaded.replayedTurn;
    return loaded;
  });
}

/** The messages of a running turn that was rebuilt from `turn_replay` (empty when there is none or it ended). */
function liveTurnMessages(thread: ChatThread | undefined): ChatMessage[] {
  if (!thread || !thread.generating || thread.replayedTurn === undefined) return [];
  const start = thread.messages.findIndex((message) => message.id === thread.replayedTurn);
  return start < 0 ? [] : thread.messages.slice(start);
}

/**
 * `turn_replay`: the running turn from its start (after a reload, in a second tab, after a reconnect). The turn this
 * thread already shows live (from the replayed or the last user message on, while generating) is rebuilt from the
 * replay: the user message, then each replayed event as if it had arrived live. History reloads when the turn ends.
 */
function applyTurnReplay(state: ChatState, event: TurnReplayEvent): ChatState {
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
    next = reduceServerEvent(next, replayed);
  }
  return withThread(next, chatId, (thread) => ({ ...thread, generating: true, resync: true, replayedTurn }));
}

const NO_METADATA = { llm: { provider: 'openai_compatible', model: '' } } as const satisfies MessageMetadata;

export function historyFailed(state: ChatState, chatId: string, detail: string): ChatState {
  return withThread(state, chatId, (thread) => ({ ...thread, history: 'failed', historyError: detail }));
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

// ---- server events ---------------------------------------------------------------------------------------

/** The assistant message a streaming event belongs to: the last one if it is streaming, else a new one. */
function withStreamingAssistant(
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
function endTurn(thread: ChatThread, cancelled: boolean, nextId: () => number): ChatThread {
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

/** Errors answering an `approval` frame (the call was settled meanwhile, or the decision could not be applied). */
const APPROVAL_ERROR_CODES: ReadonlySet<string> = new Set(['unknown_approval', 'approval_failed']);
/** Errors answering an `elicitation` frame: the form stays open (or was settled meanwhile). */
const ELICITATION_ERROR_CODES: ReadonlySet<string> = new Set(['invalid_elicitation', 'unknown_elicitation']);

function nullableString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Applies one server event. Unknown or irrelevant events return the state unchanged. */
export function reduceServerEvent(state: ChatState, event: ServerEvent): ChatState {
  switch (event.event) {
    case 'ready':
      // A fresh connection: its default chat (new, nothing on disk) opens when nothing is open yet, or when a new
      // chat was asked for and its `attached` cannot come any more (asked before the socket was open, or on a
      // connection that dropped): the default chat is that new chat.
      if (state.pendingNewChat) return activateChat({ ...state, pendingNewChat: false }, event.chat_id, true);
      return state.activeChatId === null ? activateChat(state, event.chat_id, true) : state;

    case 'attached': {
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
    }

    case 'session_updated': {
      const next = upsertSession(state, {
        chat_id: event.chat_id,
        title: event.title,
        updated_at: event.updated_at,
      });
      return next.activeChatId === null ? activateChat(next, event.chat_id, true) : next;
    }

    case 'tool_call':
      return withStreamingAssistant(state, event.chat_id, (message) => {
        const callId = nullableString(event.call_id) ?? `${event.stream_id}:${message.tools.length}`;
        const block: ToolBlockState = {
          callId,
          streamId: event.stream_id,
          name: event.tool_name,
          arguments: nullableString(event.arguments) ?? '',
          status: 'running',
          durationMs: null,
          result: null,
        };
        const index = message.tools.findIndex((tool) => tool.callId === callId);
        const tools = [...message.tools];
        if (index >= 0) {
          const existing = tools[index];
          // a call still waiting for (or refused by) its approval does not run, whatever the event order
          const status = existing.status === 'awaiting' || existing.status === 'denied' ? existing.status : 'running';
          tools[index] = { ...existing, ...block, arguments: block.arguments || existing.arguments, status };
        } else tools.push(block);
        return { ...message, tools };
      });

    case 'tool_result': {
      const thread = state.threads[event.chat_id];
      if (thread && findToolBlock(thread, event) !== null) {
        return withThread(state, event.chat_id, (current) => applyToolResult(current, event));
      }
      // The call event was missed (e.g. across a reconnect): show the finished call on its own.
      return withStreamingAssistant(state, event.chat_id, (message) => ({
        ...message,
        tools: [
          ...message.tools,
          {
            callId: nullableString(event.call_id) ?? `${event.stream_id}:${message.tools.length}`,
            streamId: event.stream_id,
            name: event.tool_name,
            arguments: '',
            ...resultFields(event),
          },
        ],
      }));
    }

    case 'delta':
      return withStreamingAssistant(state, event.chat_id, (message) => ({
        ...message,
        content: message.content + (typeof event.text === 'string' ? event.text : ''),
      }));

    case 'stream_end':
      return withThread(state, event.chat_id, (thread) =>
        thread.messages.some((message) => message.streaming)
          ? {
              ...thread,
              messages: thread.messages.map((message) =>
                message.streaming ? { ...message, streaming: false } : message,
              ),
            }
          : thread,
      );

    case 'done': {
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
    }

    case 'error': {
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
    }

    case 'warning':
      return withThread(state, event.chat_id, (thread) => warnLastUserMessage(thread, event));

    case 'stop_ack':
      // After a reconnect we cannot tell whether the turn still runs; a stop acknowledgement ends the wait.
      // (a replayed turn is known to run: its `done` follows)
      return state.threads[event.chat_id]?.resync &&
        state.threads[event.chat_id].generating &&
        state.threads[event.chat_id].replayedTurn === undefined
        ? withThread(state, event.chat_id, (thread) => endTurn(thread, false, () => 0))
        : state;

    case 'approval_request': {
      if (typeof event.call_id !== 'string' || event.call_id === '') return state;
      // an open approval means a turn is running in that chat (also after a reload, before any other event)
      const thread = state.threads[event.chat_id];
      const known = thread ? requestOnKnownCall(thread, event) : null;
      // a repeat of a request that was settled meanwhile changes nothing
      if (known === thread) return state;
      if (known !== null) return withThread(state, event.chat_id, () => ({ ...known, generating: true }));
      const next = withStreamingAssistant(state, event.chat_id, (message) => ({
        ...message,
        tools: [...message.tools, blockFromRequest(event, message.tools.at(-1)?.streamId ?? 0)],
      }));
      return withThread(next, event.chat_id, (thread) => ({ ...thread, generating: true }));
    }

    case 'approval_resolved': {
      const thread = state.threads[event.chat_id];
      const next = thread ? resolveApproval(thread, event) : thread;
      return next === thread ? state : withThread(state, event.chat_id, () => next);
    }

    case 'tool_progress': {
      if (typeof event.progress !== 'number') return state;
      const progress: ToolProgressState = { progress: event.progress };
      if (typeof event.total === 'number') progress.total = event.total;
      if (typeof event.message === 'string') progress.message = event.message;
      return withThread(state, event.chat_id, (thread) =>
        mapTools(thread, (tool) => (tool.callId === event.call_id ? { ...tool, progress } : tool)),
      );
    }

    case 'elicitation_request':
      return withThread(state, event.chat_id, (thread) =>
        mapTools(thread, (tool) =>
          tool.callId === event.call_id && tool.elicitation?.id !== event.elicitation_id
            ? { ...tool, elicitation: elicitationCard(event) }
            : tool,
        ),
      );

    case 'elicitation_resolved':
      return withThread(state, event.chat_id, (thread) =>
        setElicitationStatus(thread, event.elicitation_id, event.action),
      );

    case 'turn_replay':
      return applyTurnReplay(state, event);

    case 'pong':
    case 'message':
      return state;

    default:
      return state;
  }
}

type ToolResultEvent = Extract<ServerEvent, { event: 'tool_result' }>;

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

/** The thread with `update` applied to every tool block (unchanged blocks keep their identity). */
function mapTools(thread: ChatThread, update: (tool: ToolBlockState) => ToolBlockState): ChatThread {
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

function setElicitationStatus(thread: ChatThread, id: string, status: ElicitationStatus): ChatThread {
  return mapTools(thread, (tool) =>
    tool.elicitation?.id === id ? { ...tool, elicitation: { ...tool.elicitation, status } } : tool,
  );
}

/** The user answered an elicitation form and the frame was sent. */
export function elicitationAnswerSent(state: ChatState, chatId: string, id: string): ChatState {
  return withThread(state, chatId, (thread) => setElicitationStatus(thread, id, 'sent'));
}

function resultFields(event: ToolResultEvent): Pick<ToolBlockState, 'status' | 'durationMs' | 'result'> {
  return {
    status: event.ok === false ? 'error' : 'ok',
    durationMs: typeof event.duration_ms === 'number' ? event.duration_ms : null,
    result: nullableString(event.result) ?? '',
  };
}

/**
 * The block a result belongs to: by `call_id`; for servers that send none (the original server), the first running
 * block of the same turn and tool name.
 */
function findToolBlock(thread: ChatThread, event: ToolResultEvent): { message: number; tool: number } | null {
  const callId = nullableString(event.call_id);
  for (let m = thread.messages.length - 1; m >= 0; m--) {
    const tools = thread.messages[m].tools;
    const index =
      callId !== null
        ? tools.findIndex((tool) => tool.callId === callId)
        : tools.findIndex(
            (tool) => tool.streamId === event.stream_id && tool.name === event.tool_name && tool.status === 'running',
          );
    if (index >= 0) return { message: m, tool: index };
  }
  return null;
}

function applyToolResult(thread: ChatThread, event: ToolResultEvent): ChatThread {
  const found = findToolBlock(thread, event);
  if (found === null) return thread;
  const messages = [...thread.messages];
  const message = messages[found.message];
  const tools = [...message.tools];
  const fields = resultFields(event);
  // a refused call reports its refusal as a failed result: it stays "not run", not "failed"
  if (tools[found.tool].status === 'denied') fields.status = 'denied';
  tools[found.tool] = { ...tools[found.tool], ...fields };
  messages[found.message] = { ...message, tools };
  return { ...thread, messages };
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
