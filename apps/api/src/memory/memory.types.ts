/**
 * Chat memory shapes: history.jsonl records (spec §9.1), metadata.json (§9.3) and the in-memory message list
 * the agent sends to the model (§9.4).
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
