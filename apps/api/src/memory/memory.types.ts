/**
 * Chat memory shapes: history.jsonl records, metadata.json and the in-memory message list the agent sends to the
 * model (ChatMessage, defined in common/ because the agent and the turn-completed event use it too).
 */
import type {
  AttachmentReceipt,
  ChannelMessageSource,
  McpConnectorReceipt,
  Money,
  SessionChannelInfo,
  SkillReceipt,
  TokenUsage,
  UntrustedSource,
} from '@cashcode/contracts';

export type { ChatMessage, ToolCallRecord } from '../common/chat-message';
import type { ChatMessage, ToolCallRecord } from '../common/chat-message';

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
  /** additive (user records): the message came through a channel (openspec channels) */
  source?: ChannelMessageSource;
  tool_calls?: ToolCallRecord[];
  tool_call_id?: string;
  name?: string;
  keep_from_cursor?: number;
  /** additive: a partial assistant answer of a cancelled turn */
  cancelled?: boolean;
  /** additive (final assistant records): the model stopped at its output limit; the answer can be continued */
  truncated?: boolean;
  /** additive (final assistant records): the model's reasoning during the turn; never sent to the model */
  reasoning?: string;
  /**
   * additive (user records): the turn of this message failed; `kind` is the `error` event's code, `message` its safe
   * English detail. Such a record is never sent to the model (a retry appends a new user record).
   */
  error?: TurnErrorMarker;
  /** additive (tool records): how long the call took; (final assistant records) how long the turn took */
  duration_ms?: number;
  /** additive (final assistant records): the turn's token usage when the provider reported it */
  usage?: TokenUsage;
  /** additive (final assistant records): the turn's cost from the price table (openspec usage; absent: no price) */
  cost?: Money;
  /** additive (tool records): whether the call succeeded */
  ok?: boolean;
  /**
   * additive: this record replaces the records from this cursor up to itself (regenerate, edit and resend, continue;
   * history-branch.ts). The replaced records stay on disk; the projection and the model context skip them.
   */
  supersedes?: number;
  /** additive (user records): the uploaded files the message referred to (the model's text names their paths) */
  attachments?: AttachmentReceipt[];
  /**
   * additive (summary records): the untrusted sources of what the summary covers, so a summary of untrusted content
   * stays untrusted; (user records) untrusted content the message itself brings, e.g. a channel message of someone
   * other than the owner
   */
  untrusted_sources?: UntrustedSource[];
}

/** Why the turn of a persisted user message failed. */
export interface TurnErrorMarker {
  kind: string;
  message: string;
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
  attachments?: AttachmentReceipt[];
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
  /** a message that came through a channel: who sent it */
  source?: ChannelMessageSource;
  /** untrusted content the message itself brings (a channel message of someone other than the owner); persisted */
  untrusted_sources?: UntrustedSource[];
}

/** A chat as the agent sees it: the smart-loaded history (from the last summary on) and metadata.json, cached per process. */
export interface ChatState {
  chatId: string;
  history: ChatMessage[];
  metadata: ChatMetadata;
}

/** The final assistant answer of a turn; `cancelled` marks the partial answer of a cancelled turn. */
export interface FinalAnswer {
  content: string;
  cancelled?: boolean;
  /** additive: the model stopped at its output limit */
  truncated?: boolean;
  /** additive: the model's reasoning during the turn (shown collapsed, never sent to the model) */
  reasoning?: string;
  /** additive: the turn's token usage, only when the provider reported it */
  usage?: TokenUsage;
  /** additive: the turn's cost, only when its model has a price */
  cost?: Money;
  /** additive: how long the turn took until its answer was complete */
  duration_ms?: number;
}

/** One row of the sessions list (GET /api/sessions), before formatting. */
export interface StoredSessionSummary {
  chatId: string;
  title: string | null;
  /** mtime of history.jsonl, or of the chat directory when there is no history */
  updatedAt: Date;
  /** the channel conversation the chat belongs to (metadata.json `channel`, written by the channels module) */
  channel?: SessionChannelInfo;
}

/** Outcome of adding a line to MEMORY.md. */
export type LongTermMemorySaveResult = 'saved' | 'duplicate';

/** How a turn is appended. */
export interface AppendOptions {
  /**
   * Write on the event loop instead of the thread pool. For a caller with nothing else in flight (the only running
   * turn): the loop would only wait for the disk anyway, and the thread-pool round trip adds two thread wake-ups to
   * the turn (about half a millisecond on a small VM). With other turns running, appends go through the thread pool
   * so that no chat waits for another chat's disk write.
   */
  inline?: boolean;
  /**
   * The first record written replaces the current-branch records from this cursor on (regenerate, edit, continue;
   * history-branch.ts). The cached model context is then re-read from disk.
   */
  supersedes?: number;
}
