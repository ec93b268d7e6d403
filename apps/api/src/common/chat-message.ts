/**
 * A message as sent to the model (OpenAI chat format). Shared by memory (history), the agent runner and the
 * turn-completed event, so it lives here rather than in any one feature folder.
 */
import type { UntrustedSource } from '@cashcode/contracts';

export interface ToolCallRecord {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | {
      role: 'user';
      content: string;
      /**
       * additive, never sent to the model: untrusted content this message brings (its attachments, a channel message
       * of someone other than the owner); the turn's untrusted context includes them (agent/untrusted-context.ts)
       */
      untrusted_sources?: UntrustedSource[];
    }
  | {
      role: 'assistant';
      content: string;
      tool_calls?: ToolCallRecord[];
      /** additive, never sent to the model: a consolidation summary keeps the untrusted sources of what it summarises */
      untrusted_sources?: UntrustedSource[];
    }
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
