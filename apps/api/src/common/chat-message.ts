/**
 * A message as sent to the model (OpenAI chat format). Shared by memory (history), the agent runner and the
 * turn-completed event, so it lives here rather than in any one feature folder.
 */
export interface ToolCallRecord {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCallRecord[] }
  | {
      role: 'tool';
      content: string;
      tool_call_id: string;
      name: string;
      /** additive, persisted on the tool record (never sent to the model): whether the call succeeded */
      ok?: boolean;
      /** additive, persisted on the tool record (never sent to the model): how long the call took */
      duration_ms?: number;
    };
