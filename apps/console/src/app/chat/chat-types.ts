/**
 * The chat feature's state, as types only: the ChatStore holds one ChatState in a signal, and the pure transitions
 * (session-reducers.ts, history-merge.ts, server-events.ts) turn one state into the next. Components and helpers
 * import these types from here, so no module that the transitions use has to import the transitions back.
 */
import type {
  AttachmentReceipt,
  LoadedSkillReceipt,
  McpConnectorReceipt,
  Money,
  PublicTurnError,
  SessionSummary,
  SkillReceipt,
  TokenUsage,
  WarningEvent,
} from '@cashcode/contracts';

import type { ApprovalState } from './approval-state';
import type { ElicitationCardState, ToolProgressState } from './tool-live-state';

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
