/**
 * The conversation in Anthropic's Messages API (openspec llm-settings "Requirement: Anthropic provider"): pure
 * functions from the loop's messages (the OpenAI chat format, agent/model-gateway.ts) to a request body.
 *
 * - The leading system messages become `system` text blocks; a later system message (the selected Skills' note
 *   before the user message, the iteration-limit nudge) becomes a text block of the user turn it joins.
 * - Tool calls become `tool_use` blocks, tool results `tool_result` blocks of the next user turn (a result whose text
 *   starts with `Error` is `is_error`), and the images of a tool round (the user message with `image_url` parts that
 *   follows its results) image blocks of that same turn. The `[TOOL_CALLS: …]` text the history keeps for a tool-call
 *   message is left out (the `tool_use` blocks say it); the thinking blocks of the running turn's tool loop (`replay`)
 *   open their assistant message, unchanged and in order, as the API requires.
 * - Consecutive messages of one role are merged (the API alternates user and assistant).
 * - Prompt caching: `cache_control` breakpoints on the last tool, the last system block, the last block of the
 *   conversation (the moving end) and the last block of the user turn before it (the previous request's end, where
 *   the cache was written). Everything is derived from the messages alone, so a request is the previous request's
 *   bytes with the new turns appended: the cached prefix holds from turn to turn.
 */
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { GatewayMessage } from './gateway-attempts';

const EPHEMERAL = { type: 'ephemeral' } as const;
/** The history's placeholder text of a tool-call message (memory/history-record.ts `toolCallsContent`). */
const TOOL_CALLS_PLACEHOLDER = /^\[TOOL_CALLS(?:: [^\]\n]*)?\]$/;
const DATA_URL = /^data:([a-z0-9.+/-]{1,100});base64,/i;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export interface AnthropicRequestOptions {
  model: string;
  maxTokens: number;
  /** extended thinking with this budget (tokens, ≥ 1024 and below maxTokens); absent: off */
  thinkingBudget?: number;
}

/** A tool call id as the API accepts it (`^[a-zA-Z0-9_-]+$`): other characters become `_` (same input, same id). */
export function anthropicToolId(id: string): string {
  const safe = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return safe === '' ? 'call' : safe;
}

function textOf(content: GatewayMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ type: string; text?: string }>).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

/** User content parts as blocks: text, and `image_url` data URLs as base64 image blocks. */
function userBlocks(content: GatewayMessage['content']): ContentBlockParam[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: ContentBlockParam[] = [];
  for (const part of content as Array<{ type: string; text?: string; image_url?: { url?: string } }>) {
    if (part.type === 'text' && part.text) blocks.push({ type: 'text', text: part.text });
    if (part.type === 'image_url') {
      const url = part.image_url?.url ?? '';
      const match = DATA_URL.exec(url);
      const mediaType = match?.[1]?.toLowerCase();
      if (match && mediaType && IMAGE_TYPES.has(mediaType)) {
        const image: ImageBlockParam = {
          type: 'image',
          source: { type: 'base64', media_type: mediaType as 'image/png', data: url.slice(match[0].length) },
        };
        blocks.push(image);
      }
    }
  }
  return blocks;
}

function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function isReplayBlock(value: unknown): value is ContentBlockParam {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'thinking' || type === 'redacted_thinking';
}

function assistantBlocks(message: GatewayMessage): ContentBlockParam[] {
  if (message.role !== 'assistant') return [];
  const blocks: ContentBlockParam[] = [];
  if (Array.isArray(message.replay)) for (const block of message.replay) if (isReplayBlock(block)) blocks.push(block);
  const calls = message.tool_calls ?? [];
  const text = textOf(message.content);
  if (text !== '' && !(calls.length > 0 && TOOL_CALLS_PLACEHOLDER.test(text))) blocks.push({ type: 'text', text });
  for (const call of calls) {
    if (call.type !== 'function') continue;
    blocks.push({ type: 'tool_use', id: anthropicToolId(call.id), name: call.function.name, input: parseInput(call.function.arguments) });
  }
  return blocks;
}

/** The system blocks and the alternating user/assistant turns of a conversation. */
export function anthropicConversation(messages: readonly GatewayMessage[]): { system: TextBlockParam[]; turns: MessageParam[] } {
  const system: TextBlockParam[] = [];
  const turns: MessageParam[] = [];
  let leading = true;
  const append = (role: 'user' | 'assistant', blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else turns.push({ role, content: [...blocks] });
  };
  for (const message of messages) {
    if (message.role === 'system' && leading) {
      const text = textOf(message.content);
      if (text !== '') system.push({ type: 'text', text });
      continue;
    }
    leading = false;
    switch (message.role) {
      case 'system':
      case 'developer':
        append('user', [{ type: 'text', text: textOf(message.content) }].filter((block) => block.text !== '') as TextBlockParam[]);
        break;
      case 'user':
        append('user', userBlocks(message.content));
        break;
      case 'assistant':
        append('assistant', assistantBlocks(message));
        break;
      case 'tool': {
        const text = textOf(message.content);
        const result: ToolResultBlockParam = {
          type: 'tool_result',
          tool_use_id: anthropicToolId(message.tool_call_id),
          content: text,
          ...(text.startsWith('Error') ? { is_error: true } : {}),
        };
        append('user', [result]);
        break;
      }
      default:
        break;
    }
  }
  return { system, turns };
}

/** Marks a block as a cache breakpoint (thinking blocks cannot carry one; the last other block is chosen). */
function markLastCacheable(blocks: ContentBlockParam[]): boolean {
  for (let index = blocks.length - 1; index >= 0; index--) {
    const block = blocks[index] as ContentBlockParam & { cache_control?: unknown };
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    blocks[index] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
    return true;
  }
  return false;
}

/** The streaming request body of one call. */
export function anthropicRequest(
  messages: readonly GatewayMessage[],
  tools: readonly ChatCompletionFunctionTool[],
  options: AnthropicRequestOptions,
): MessageCreateParamsStreaming {
  const { system, turns } = anthropicConversation(messages);
  const anthropicTools: Tool[] = tools.map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    input_schema: (tool.function.parameters ?? { type: 'object', properties: {} }) as Tool['input_schema'],
  }));
  // breakpoints (at most 4): tools, system, the end of the conversation and the end of the user turn before it
  const lastTool = anthropicTools[anthropicTools.length - 1];
  if (lastTool) anthropicTools[anthropicTools.length - 1] = { ...lastTool, cache_control: EPHEMERAL };
  const lastSystem = system[system.length - 1];
  if (lastSystem) system[system.length - 1] = { ...lastSystem, cache_control: EPHEMERAL };
  let marked = 0;
  for (let index = turns.length - 1; index >= 0 && marked < 2; index--) {
    const turn = turns[index] as MessageParam;
    if (marked === 1 && turn.role !== 'user') continue;
    if (markLastCacheable(turn.content as ContentBlockParam[])) marked++;
  }
  const params: MessageCreateParamsStreaming = {
    model: options.model,
    max_tokens: options.maxTokens,
    messages: turns,
    stream: true,
  };
  if (system.length > 0) params.system = system;
  if (anthropicTools.length > 0) params.tools = anthropicTools;
  if (options.thinkingBudget !== undefined) params.thinking = { type: 'enabled', budget_tokens: options.thinkingBudget };
  return params;
}
