/**
 * The everyday chat actions (openspec chat "Requirement: Chat actions"): what a `chat_action` frame asks for, checked
 * against the chat's current branch (history-branch.ts) before a turn is queued. Pure: the caller reads the records.
 *
 * - regenerate: the last user message of the current branch is answered again; the new user record (same text and
 *   selection receipts) replaces it and everything after it.
 * - edit: the user message at `cursor` (a user record of the current branch) is resent with new text; the new user
 *   record replaces it and everything after it. Selections default to the replaced message's.
 * - continue: the last record of the current branch must be a stopped (cancelled) answer or one cut at the model's
 *   output limit (truncated); the model is sent the history
 *   (ending with that partial answer) plus CONTINUE_INSTRUCTION as a user message that is never persisted, and the
 *   continued answer (partial text + new text) replaces the partial record. Sending the partial answer back as the
 *   last assistant message plus an instruction works with every OpenAI-compatible provider (assistant prefill is not
 *   part of that API).
 */
import type { ChatActionName, McpConnectorReceipt, MessageMetadata, SkillReceipt, TokenUsage, Money } from '@cashcode/contracts';
import { currentBranch } from '../memory/history-branch';
import type { HistoryRecord } from '../memory/memory.types';

/** The user message sent (never persisted) after the partial answer when continuing. */
export const CONTINUE_INSTRUCTION =
  'Continue your previous answer exactly where it stopped. Do not repeat what you already wrote and do not comment on the interruption.';

export interface ChatActionRequest {
  action: ChatActionName;
  cursor?: number;
  content?: string;
  metadata: MessageMetadata;
}

/** A checked action: what the queued turn does. */
export type ChatActionPlan =
  | {
      kind: 'resend';
      /** the cursor of the replaced user record: the new records supersede it and everything after it */
      supersedes: number;
      content: string;
      metadata: MessageMetadata;
    }
  | {
      kind: 'continue';
      /** the cursor of the stopped answer */
      supersedes: number;
      /** its text: the continued answer starts with it */
      partial: string;
      /** the user message the stopped answer belongs to (for listeners of turn.completed) */
      userContent: string;
      /** the stopped answer's stored usage, cost and duration: the continued answer adds its own */
      usage?: TokenUsage;
      cost?: Money;
      durationMs?: number;
      metadata: MessageMetadata;
    };

export type ChatActionCheck = { ok: true; plan: ChatActionPlan } | { ok: false; code: string; detail: string };

function withReceipts(metadata: MessageMetadata, record: HistoryRecord): MessageMetadata {
  const merged: MessageMetadata = { ...metadata };
  const skills = record.mentioned_skills as SkillReceipt[] | undefined;
  const connectors = record.selected_mcp_connectors as McpConnectorReceipt[] | undefined;
  if (!merged.mentioned_skills && Array.isArray(skills) && skills.length > 0) merged.mentioned_skills = skills;
  if (!merged.selected_mcp_connectors && Array.isArray(connectors) && connectors.length > 0) {
    merged.selected_mcp_connectors = connectors;
  }
  return merged;
}

/** Checks an action against every record of the chat (file order). */
export function planChatAction(records: readonly HistoryRecord[], request: ChatActionRequest): ChatActionCheck {
  const branch = currentBranch(records);
  const lastUser = [...branch].reverse().find((record) => record.role === 'user');
  switch (request.action) {
    case 'regenerate': {
      if (!lastUser) {
        return { ok: false, code: 'nothing_to_regenerate', detail: 'This chat has no message to answer again.' };
      }
      return {
        ok: true,
        plan: {
          kind: 'resend',
          supersedes: lastUser.cursor,
          content: lastUser.content,
          metadata: withReceipts(request.metadata, lastUser),
        },
      };
    }
    case 'edit': {
      const target = branch.find((record) => record.cursor === request.cursor);
      if (!target || target.role !== 'user' || request.content === undefined) {
        return {
          ok: false,
          code: 'invalid_target',
          detail: `No user message with cursor ${String(request.cursor)} is shown in this chat; reload it and try again.`,
        };
      }
      return {
        ok: true,
        plan: {
          kind: 'resend',
          supersedes: target.cursor,
          content: request.content,
          metadata: withReceipts(request.metadata, target),
        },
      };
    }
    case 'continue': {
      const last = branch[branch.length - 1];
      if (!last || last.role !== 'assistant' || (last.cancelled !== true && last.truncated !== true)) {
        return { ok: false, code: 'nothing_to_continue', detail: 'The last answer of this chat was not stopped; there is nothing to continue.' };
      }
      return {
        ok: true,
        plan: {
          kind: 'continue',
          supersedes: last.cursor,
          partial: last.content,
          userContent: lastUser?.content ?? '',
          metadata: request.metadata,
          ...(last.usage ? { usage: last.usage } : {}),
          ...(last.cost ? { cost: last.cost } : {}),
          ...(typeof last.duration_ms === 'number' ? { durationMs: last.duration_ms } : {}),
        },
      };
    }
  }
}
