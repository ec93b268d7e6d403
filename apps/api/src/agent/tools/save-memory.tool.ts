/**
 * `save_memory` (openspec builtin-tools, memory): appends one dated line to the global MEMORY.md, which is injected
 * into every system prompt. Empty content and text already present are refused with a plain message (not a tool
 * failure). Each saved entry's provenance (chat, turn, who asked, the untrusted sources in context) goes to the
 * provenance log beside MEMORY.md.
 */
import type { AgentTool, JsonSchemaObject, ToolContext } from '../agent-tool';
import { MemoryDocuments } from '../../memory/memory-documents';
import { requireString } from './tool-args';

export const SAVE_MEMORY_EMPTY = 'Content is empty; nothing saved.';
export const SAVE_MEMORY_DUPLICATE = 'This information is already in long-term memory.';
export const SAVE_MEMORY_SAVED_PREFIX = 'Saved to long-term memory: ';

export class SaveMemoryTool implements AgentTool {
  readonly name = 'save_memory';
  readonly description =
    'Save a durable fact to long-term memory (shared by all chats and shown to you in every conversation). ' +
    'Use it only when the user explicitly asks you to remember something lasting, such as a preference or a ' +
    'personal fact; never for temporary queries or small talk.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      content: { type: 'string', description: 'The fact to remember, as one short self-contained sentence' },
    },
    required: ['content'],
  };
  readonly readOnly = false;

  constructor(private readonly memory: MemoryDocuments) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const content = requireString(args, 'content').trim();
    if (content === '') return SAVE_MEMORY_EMPTY;
    ctx.signal.throwIfAborted();
    const outcome = await this.memory.saveLongTermMemory(content, {
      origin: 'save_memory',
      requested_by: ctx.requestedBy ?? 'owner',
      chat_id: ctx.chatId,
      turn_id: ctx.turnId,
      untrusted_sources: [...(ctx.untrustedSources ?? [])],
      ...(ctx.approved === true ? { approved: true } : {}),
    });
    return outcome === 'duplicate' ? SAVE_MEMORY_DUPLICATE : `${SAVE_MEMORY_SAVED_PREFIX}${content}`;
  }
}
