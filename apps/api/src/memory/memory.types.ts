/**
 * Chat memory shapes: history.jsonl records (openspec memory), metadata.json (openspec memory) and the in-memory
 * message list the agent sends to the model (openspec memory).
 */
import type { McpConnectorReceipt, SkillReceipt } from '@cashcode/contracts';

export interface ToolCallRecord {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message as sent to the model (OpenAI chat format). */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCallRecord[] }
  | { role: 'tool'; content: string; tool_call_id: string; name: string };

export type HistoryRole = 'user' | 'assistant' | 'tool_calls' | 'tool' | 'summary';

/** One line of history.jsonl. Unknown extra fields are preserved when read. */
export interface HistoryRecord {
  cursor: number;
  /** local YYYY-MM-DD HH:MM */
  timestamp: string;
  role: HistoryRole;
  content: string;
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
  tool_calls?: ToolCallRecord[];
  tool_call_id?: string;
  name?: string;
  keep_from_cursor?: number;
  /** additive: a partial assistant answer of a cancelled turn */
  cancelled?: boolean;
}

export interface ActivatedSkillEntry {
  description: string;
  version: string;
  hash: string;
  last_used: number;
}

export interface ChatMetadata {
  title?: string;
  activated_tools?: Record<string, number>;
  activated_skills?: Record<string, ActivatedSkillEntry>;
  [key: string]: unknown;
}

/** The user side of a turn to persist. */
export interface UserTurnInput {
  content: string;
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
}

/** A chat as the agent sees it: the smart-loaded history (openspec memory) and metadata.json, cached per process. */
export interface ChatState {
  chatId: string;
  history: ChatMessage[];
  metadata: ChatMetadata;
}

/** The final assistant answer of a turn; `cancelled` marks the partial answer of a cancelled turn. */
export interface FinalAnswer {
  content: string;
  cancelled?: boolean;
}

/** Emitted with EventEmitter2 after a session was deleted, so a running turn of that chat can be cancelled. */
export const SESSION_DELETED_EVENT = 'session.deleted';
export interface SessionDeletedEvent {
  chatId: string;
}

/** One row of the sessions list, before formatting (openspec sessions). */
export interface StoredSessionSummary {
  chatId: string;
  title: string | null;
  /** mtime of history.jsonl, or of the chat directory when there is no history */
  updatedAt: Date;
}

/** Outcome of adding a line to MEMORY.md. */
export type LongTermMemorySaveResult = 'saved' | 'duplicate';

/** Emitted with EventEmitter2 when a background consolidation attempt of a chat has finished (any outcome). */
export const CONSOLIDATION_FINISHED_EVENT = 'memory.consolidation.finished';
export type ConsolidationOutcome =
  /** the history is below the threshold */
  | 'below_threshold'
  /** another consolidation of this chat is running */
  | 'busy'
  /** no user-turn boundary leaves anything to summarise */
  | 'nothing_to_compress'
  | 'consolidated'
  /** the model failed, timed out or answered nothing, or the chat was deleted: nothing changed */
  | 'failed'
  /** skipped: the chat's last attempts failed and it is waiting a few turns before trying again */
  | 'backoff';
export interface ConsolidationFinishedEvent {
  chatId: string;
  outcome: ConsolidationOutcome;
  /** keep_from_cursor of the appended summary (consolidated only) */
  keepFromCursor?: number;
}

/** Emitted with EventEmitter2 after every Dream attempt (recorded or not). */
export const DREAM_FINISHED_EVENT = 'memory.dream.finished';
