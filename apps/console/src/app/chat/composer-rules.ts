/**
 * What the composer may send (openspec console): an open chat, a model, non-blank text; the frame carries the trimmed
 * content and `metadata.llm`, validated with the same rules as the gateway (openspec chat).
 */
import {
  sanitizeMessageMetadata,
  type LlmSelection,
  type McpConnectorReceipt,
  type MessageFrame,
  type SkillReceipt,
} from '@cashcode/contracts';

import type { MessageKey } from '../core/i18n/i18n';

export interface ComposeInput {
  chatId: string | null;
  text: string;
  selection: LlmSelection | null;
  mentionedSkills?: readonly SkillReceipt[];
  selectedMcpConnectors?: readonly McpConnectorReceipt[];
  /** workspace paths of the uploaded files the message refers to */
  attachments?: readonly string[];
}

export type ComposeResult = { ok: true; frame: MessageFrame } | { ok: false; error: MessageKey };

export function buildMessageFrame(input: ComposeInput): ComposeResult {
  if (input.chatId === null) return { ok: false, error: 'composer.error.noChat' };
  if (input.selection === null) return { ok: false, error: 'composer.error.noModel' };
  const content = input.text.trim();
  if (content === '') return { ok: false, error: 'composer.error.empty' };
  const raw: Record<string, unknown> = { llm: { provider: input.selection.provider, model: input.selection.model } };
  if (input.mentionedSkills?.length) raw['mentioned_skills'] = input.mentionedSkills;
  if (input.selectedMcpConnectors?.length) raw['selected_mcp_connectors'] = input.selectedMcpConnectors;
  const metadata = sanitizeMessageMetadata(raw);
  if (!metadata.ok) return { ok: false, error: 'composer.error.invalidModel' };
  const frame: MessageFrame = { type: 'message', chat_id: input.chatId, content, metadata: metadata.metadata };
  if (input.attachments?.length) frame.attachments = [...input.attachments];
  return { ok: true, frame };
}

/** Whether the Send button is enabled. */
export function canSend(input: {
  text: string;
  chatReady: boolean;
  hasModel: boolean;
  modelsLoading: boolean;
  generating: boolean;
}): boolean {
  return input.text.trim() !== '' && input.chatReady && input.hasModel && !input.modelsLoading && !input.generating;
}

/** Enter sends, Shift+Enter (or an IME composition) does not. */
export function isSendKey(event: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'isComposing' | 'keyCode'>): boolean {
  return event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229;
}
