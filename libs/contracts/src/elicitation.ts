/**
 * MCP elicitation (form mode) over the chat WebSocket: a server asks the user for input while one of its tools runs.
 * The request becomes a form card in the chat, answered with an `elicitation` frame (openspec mcp
 * "Requirement: Elicitation").
 */

export type ElicitationAction = 'accept' | 'decline' | 'cancel';
export const ELICITATION_ACTIONS: readonly ElicitationAction[] = ['accept', 'decline', 'cancel'];

/** A value of an elicitation form field. */
export type ElicitationValue = string | number | boolean | string[];

/** server → client: a running tool's server asks for input; re-sent to every client that attaches while it waits. */
export interface ElicitationRequestEvent {
  event: 'elicitation_request';
  chat_id: string;
  elicitation_id: string;
  /** the tool call that is running */
  call_id: string;
  tool_name: string;
  /** the MCP server asking */
  server: string;
  message: string;
  /** the requested JSON schema: an object of flat, primitive properties (strings, numbers, booleans, enums) */
  requested_schema: Record<string, unknown>;
  /** seconds until the request is cancelled */
  timeout_sec: number;
}

/** server → client: the request was answered (by a client, the timeout or the end of the turn). */
export interface ElicitationResolvedEvent {
  event: 'elicitation_resolved';
  chat_id: string;
  elicitation_id: string;
  action: ElicitationAction;
}

/** client → server: the answer; `content` only with `accept`, validated against the requested schema. */
export interface ElicitationFrame {
  type: 'elicitation';
  chat_id: string;
  elicitation_id: string;
  action: ElicitationAction;
  content?: Record<string, ElicitationValue>;
}
