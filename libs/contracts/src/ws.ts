/**
 * WebSocket protocol between the console (or any client) and the ChatGateway.
 * See openspec/specs/chat/spec.md. Fields CashCode added to the original Python server's protocol are marked
 * "additive": old clients ignore them.
 */

import type { LlmSelection } from './llm-provider';
import type { Money, SpendLimitStatus, UsageWarningEvent } from './usage';
import type { ApprovalFrame, ApprovalRequestEvent, ApprovalResolvedEvent } from './approvals';
import type { ElicitationFrame, ElicitationRequestEvent, ElicitationResolvedEvent } from './elicitation';
import type { AutomationRunEvent } from './automations';
import type { SubagentServerEvent } from './subagents';

export const CHAT_ID_PATTERN = /^[A-Za-z0-9_:-]{1,64}$/;
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_SELECTIONS = 8;
export const MAX_LABEL_CHARS = 100;
export const MAX_MODEL_CHARS = 256;
export const WS_MAX_PAYLOAD_BYTES = 1024 * 1024;
export const TITLE_MAX_CHARS = 40;


export interface SkillReceipt {
  name: string;
  label?: string;
}

export interface McpConnectorReceipt {
  server: string;
  label?: string;
}

/** Sanitised message metadata (openspec chat). */
export interface MessageMetadata {
  llm: LlmSelection;
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
}

// ---- client → server frames -------------------------------------------------------------

export interface PingFrame {
  type: 'ping';
}
export interface NewChatFrame {
  type: 'new_chat';
}
export interface AttachFrame {
  type: 'attach';
  chat_id: string;
}
export interface CancelFrame {
  type: 'cancel' | 'stop';
  chat_id: string;
}
export interface MessageFrame {
  type: 'message';
  chat_id: string;
  content: string;
  metadata: MessageMetadata;
  /**
   * additive (optional): workspace-relative paths of files uploaded to this chat (`POST /api/sessions/{chat_id}/attachments`)
   * that the message refers to; each must be an uploaded file of this chat, else the turn fails with `attachment_not_found`
   */
  attachments?: string[];
}
/** additive: the everyday actions on a chat's last turn or on a sent message (openspec chat "Requirement: Chat actions"). */
export const CHAT_ACTIONS = ['regenerate', 'edit', 'continue'] as const;
export type ChatActionName = (typeof CHAT_ACTIONS)[number];
/**
 * additive: `regenerate` answers the last user message of the current branch again; `edit` resends the user message
 * at `cursor` (a `cursor` of `GET /api/sessions/{chat_id}/messages` or of `done.user_cursor`) with new `content`;
 * `continue` continues a stopped (cancelled) last answer, or one the model cut at its output limit (`truncated`). History stays append-only: the new records replace the old
 * ones (`supersedes`), which stay on disk. The turn's events are those of a `message` turn. Refused with an `error`
 * event: `turn_running`, `nothing_to_regenerate`, `invalid_target`, `nothing_to_continue`, `invalid_frame`,
 * `missing_content`.
 */
export interface ChatActionFrame {
  type: 'chat_action';
  chat_id: string;
  action: ChatActionName;
  /** edit: the cursor of the user message to replace */
  cursor?: number;
  /** edit: the new text */
  content?: string;
  /** the model selection (and, for edit, optional new Skill/MCP selections; else the replaced message's are kept) */
  metadata: MessageMetadata;
}
export type ClientFrame =
  | PingFrame
  | NewChatFrame
  | AttachFrame
  | CancelFrame
  | MessageFrame
  | ApprovalFrame
  | ElicitationFrame
  | ChatActionFrame;

// ---- server → client events -------------------------------------------------------------

export interface ReadyEvent {
  event: 'ready';
  chat_id: string;
  client_id: string;
}
export interface AttachedEvent {
  event: 'attached';
  chat_id: string;
  /**
   * additive (optional): whether a turn is running for this chat right now. Lets a reconnecting client that
   * re-attaches know whether the turn it was showing ended while it was offline.
   */
  turn_active?: boolean;
}
export interface SessionUpdatedEvent {
  event: 'session_updated';
  chat_id: string;
  title: string;
  /** local ISO-8601 with seconds and offset, e.g. 2026-07-26T12:00:00+08:00 */
  updated_at: string;
}
export interface ToolCallEvent {
  event: 'tool_call';
  chat_id: string;
  tool_name: string;
  stream_id: number;
  /** additive: one id per tool call */
  call_id: string;
  /** additive: redacted, truncated JSON text of the arguments */
  arguments: string;
}
export interface ToolResultEvent {
  event: 'tool_result';
  chat_id: string;
  tool_name: string;
  /** first 200 chars of the public projection */
  result: string;
  stream_id: number;
  /** additive */
  call_id: string;
  /** additive: false when the tool failed */
  ok: boolean;
  /** additive */
  duration_ms: number;
}
/**
 * additive: a running tool reported progress (an MCP `notifications/progress`); `total` and `message` only when the
 * server sent them. Sent between the call's `tool_call` and its `tool_result`.
 */
export interface ToolProgressEvent {
  event: 'tool_progress';
  chat_id: string;
  call_id: string;
  tool_name: string;
  stream_id: number;
  progress: number;
  total?: number;
  message?: string;
}
export interface DeltaEvent {
  event: 'delta';
  chat_id: string;
  text: string;
  stream_id: number;
}
/**
 * additive: a piece of the model's reasoning (a reasoning model's `reasoning_content` / `reasoning`, a `<think>` block,
 * an Anthropic thinking block), kept apart from the answer text: clients show it collapsed; it is stored with the answer
 * (`reasoning` of the assistant row) and never part of `delta` text, the title, summaries or memory.
 */
export interface ReasoningEvent {
  event: 'reasoning';
  chat_id: string;
  text: string;
  stream_id: number;
}
export interface StreamEndEvent {
  event: 'stream_end';
  chat_id: string;
  stream_id: number;
}
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** prompt tokens the provider served from its prompt cache (`prompt_tokens_details.cached_tokens`), when it says */
  cached_tokens?: number;
  /** additive: prompt tokens the provider wrote to its prompt cache (Anthropic `cache_creation_input_tokens`), when it says */
  cache_write_tokens?: number;
}
export interface DoneEvent {
  event: 'done';
  chat_id: string;
  duration_sec: number;
  /** additive */
  usage: TokenUsage;
  /** additive */
  cancelled: boolean;
  /** additive: history cursor of the turn's user message (absent for `continue`, and when nothing was persisted) */
  user_cursor?: number;
  /** additive: history cursor of the turn's final answer (absent when nothing was persisted) */
  answer_cursor?: number;
  /** additive: the turn's cost from the price table (absent when its model has no price: "no price") */
  cost?: Money;
  /** additive: true when the model stopped at its output limit; the answer is cut short and `continue` carries on */
  truncated?: boolean;
}
export interface ErrorEvent {
  event: 'error';
  detail: string;
  chat_id?: string;
  /** additive: machine-readable error class (e.g. invalid_chat_id, llm_not_configured, rate_limit) */
  code?: string;
  /** additive, with `spend_limit_reached`: the limit the call would have crossed, what was spent and when it resets */
  limit?: SpendLimitStatus;
}
/**
 * additive: something the user selected could not be honoured, but the turn still runs (an explicitly selected Skill
 * that cannot load, a selected MCP connector that cannot be prepared). Sent before the turn's first delta.
 */
export interface WarningEvent {
  event: 'warning';
  chat_id: string;
  /** machine-readable cause: skill_not_found, skill_disabled, missing_dependency, invalid_skill, mcp_prepare_failed, … */
  code: string;
  /** what was selected: `skill` or `mcp` */
  subject: 'skill' | 'mcp';
  /** the Skill or MCP server name */
  name: string;
  detail: string;
}
/**
 * additive: what the running turn of a chat has produced so far, sent to a connection right after it attaches (or
 * otherwise starts following) a chat whose turn is running. `user` is the turn's message; `events` are the turn's events
 * from its start in order (consecutive deltas coalesced into one, only the last progress report of each tool call;
 * approval and elicitation requests still pending are left out, they follow as standalone events as before). Live
 * events follow the replay with no gap and no duplicate. `truncated`: the turn's log reached its size cap, so `events`
 * stops early (the answer is complete in `GET /api/sessions/{id}/messages` once the turn is done).
 */
export interface TurnReplayEvent {
  event: 'turn_replay';
  chat_id: string;
  stream_id: number;
  user: { content: string; metadata: MessageMetadata };
  events: ServerEvent[];
  truncated: boolean;
}
export interface PongEvent {
  event: 'pong';
}
export interface StopAckEvent {
  event: 'stop_ack';
  chat_id: string;
}
export interface GenericMessageEvent {
  event: 'message';
  chat_id: string;
  text: string;
}

export type ServerEvent =
  | ReadyEvent
  | AttachedEvent
  | SessionUpdatedEvent
  | ToolCallEvent
  | ToolResultEvent
  | ToolProgressEvent
  | DeltaEvent
  | ReasoningEvent
  | StreamEndEvent
  | DoneEvent
  | ErrorEvent
  | WarningEvent
  | PongEvent
  | StopAckEvent
  | GenericMessageEvent
  | ApprovalRequestEvent
  | ApprovalResolvedEvent
  | ElicitationRequestEvent
  | ElicitationResolvedEvent
  | TurnReplayEvent
  | UsageWarningEvent
  | AutomationRunEvent
  | SubagentServerEvent;

export type ServerEventName = ServerEvent['event'];
