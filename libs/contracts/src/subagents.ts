/**
 * Sub-agents (openspec subagents): the `delegate` tool starts a child agent with a fresh context, a subset of the
 * parent turn's tools and its own iteration limit. Its progress reaches the chat's connections as additive events,
 * each naming the parent's `delegate` call (`call_id`); its whole transcript is kept with the chat and served by
 * `GET /api/sessions/{chat_id}/subagents/{call_id}`.
 */
import type { Money } from './usage';

/** Tokens a child's model calls used (the shape of `TokenUsage` of ws.ts, which imports this file). */
export interface SubagentUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Which sub-agent something belongs to: the parent's `delegate` call and the task it was given. */
export interface SubagentRef {
  call_id: string;
  task: string;
}

/** server → client: a `delegate` call started its child (after the parent's `tool_call` of `delegate`). */
export interface SubagentStartedEvent {
  event: 'subagent_started';
  chat_id: string;
  stream_id: number;
  /** the parent's `delegate` call */
  call_id: string;
  task: string;
  /** the tools the child may use */
  tools: string[];
  max_iterations: number;
}

/** What a child did, in the shape of the parent turn's own events (without `chat_id` and `stream_id`). */
export type SubagentInnerEvent =
  | { event: 'tool_call'; tool_name: string; call_id: string; arguments: string }
  | { event: 'tool_result'; tool_name: string; call_id: string; result: string; ok: boolean; duration_ms: number }
  | { event: 'delta'; text: string };

/** server → client: one step of a running child (a tool call, a tool result, or answer text). */
export interface SubagentEventEvent {
  event: 'subagent_event';
  chat_id: string;
  stream_id: number;
  /** the parent's `delegate` call */
  call_id: string;
  inner: SubagentInnerEvent;
}

/** How a child ended: an answer, or a failure the parent's model gets as a tool error. */
export type SubagentOutcome = 'ok' | 'failed' | 'cancelled';

/** server → client: the child ended (before the parent's `tool_result` of `delegate`). */
export interface SubagentDoneEvent {
  event: 'subagent_done';
  chat_id: string;
  stream_id: number;
  call_id: string;
  outcome: SubagentOutcome;
  /** failed: machine-readable cause (`model_error`, `spend_limit_reached`, `iteration_limit`, …) */
  code?: string;
  /** failed: what went wrong, in English */
  detail?: string;
  tool_calls: number;
  duration_ms: number;
  usage: SubagentUsage;
}

export type SubagentServerEvent = SubagentStartedEvent | SubagentEventEvent | SubagentDoneEvent;

/** One message of a child's transcript (its own conversation; tool results as the history keeps them). */
export interface SubagentTranscriptMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** assistant: the tool calls it made */
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  /** tool: the call it answers, the tool's name and whether it succeeded */
  tool_call_id?: string;
  name?: string;
  ok?: boolean;
  duration_ms?: number;
}

/**
 * `GET /api/sessions/{chat_id}/subagents/{call_id}`: the whole transcript of a child, stored in the chat's directory
 * when the child ended (`artifacts/subagent-<call_id>.txt`, JSON).
 */
export interface SubagentTranscript {
  call_id: string;
  task: string;
  tools: string[];
  max_iterations: number;
  outcome: SubagentOutcome;
  code?: string;
  detail?: string;
  /** the child's final answer (empty when it failed) */
  answer: string;
  /** the child's conversation without its system prompt: the task, its tool rounds and its answer */
  messages: SubagentTranscriptMessage[];
  usage: SubagentUsage;
  cost?: Money;
  /** ISO 8601 with offset */
  started_at: string;
  duration_ms: number;
}
