/**
 * Loading a chat's persisted history into its thread. The persisted messages replace the local copy, except what the
 * projection cannot hold yet: a running turn rebuilt from `turn_replay` stays after them (and history reloads when it
 * ends), and an approval still waiting for the user is kept. Persisted tool calls become the blocks a live turn shows.
 */
import { channelMessageSource } from '@cashcode/contracts';
import type { PublicMessage, PublicToolRecord } from '@cashcode/contracts';

import { reportedUsage } from './answer-stats';
import { keepPendingApprovals } from './approval-state';
import { normalizeAttachments } from './attachments/attachment-rules';
import { normalizeLoadedSkills, normalizePersistedReceipts } from './capability-picker/capability-rules';
import type { ChatMessage, ChatState, ChatThread, ToolBlockState } from './chat-types';
import { withThread } from './thread-updates';
import { isMoney } from '../usage/usage-format';

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

export function historyLoading(state: ChatState, chatId: string): ChatState {
  return withThread(state, chatId, (thread) => ({ ...thread, history: 'loading', historyError: null }));
}

export function historyFailed(state: ChatState, chatId: string, detail: string): ChatState {
  return withThread(state, chatId, (thread) => ({ ...thread, history: 'failed', historyError: detail }));
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
      if (typeof message.reasoning === 'string' && message.reasoning !== '') row.reasoning = message.reasoning;
      if (message.truncated === true) row.truncated = true;
    }
    if (message.role === 'user' && message.error && typeof message.error.message === 'string') {
      row.error = { kind: String(message.error.kind ?? ''), message: message.error.message };
    }
    if (receipts.mentioned_skills) row.mentionedSkills = receipts.mentioned_skills;
    if (receipts.selected_mcp_connectors) row.selectedMcpConnectors = receipts.selected_mcp_connectors;
    if (loadedSkills.length > 0) row.loadedSkills = loadedSkills;
    const attachments = message.role === 'user' ? normalizeAttachments(message.attachments) : [];
    if (attachments.length > 0) row.attachments = attachments;
    const source = message.role === 'user' ? channelMessageSource(message.source) : null;
    if (source) row.source = source;
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
