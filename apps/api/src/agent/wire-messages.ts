/**
 * The conversation as the model gets it: history messages in the OpenAI chat format, and the images of this turn
 * (the user's attachments, a tool round's images) as `image_url` parts for a model that takes images. Images are
 * never persisted: they live in the request of this turn only.
 */
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { isToolCallsContent } from '../memory/history-record';
import type { ChatMessage, ToolCallRecord } from '../memory/memory.types';
import type { ToolExecution } from './tool-registry';

/** An image attached to the user message. */
export interface UserImage {
  mimeType: string;
  /** base64 */
  data: string;
}

export function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
    case 'assistant':
      // the history's `[TOOL_CALLS: …]` placeholder is for people and titles: the model has the calls themselves, and a
      // placeholder in its context invites it to write one as text instead of calling; "" costs no prompt bytes
      return message.tool_calls && message.tool_calls.length > 0
        ? { role: 'assistant', content: isToolCallsContent(message.content) ? '' : message.content, tool_calls: message.tool_calls }
        : { role: 'assistant', content: message.content };
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
  }
}

/**
 * The last user message of `wire` as OpenAI content parts: its text, then one `image_url` part (a data URL) per image.
 * Changes nothing without images or without a user message.
 */
export function withUserImages(wire: ChatCompletionMessageParam[], images: readonly UserImage[]): void {
  if (images.length === 0) return;
  for (let index = wire.length - 1; index >= 0; index--) {
    const message = wire[index] as ChatCompletionMessageParam;
    if (message.role !== 'user') continue;
    const text = typeof message.content === 'string' ? message.content : '';
    const parts: ChatCompletionContentPart[] = [{ type: 'text', text }];
    for (const image of images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } });
    }
    wire[index] = { role: 'user', content: parts };
    return;
  }
}

/** The user message that hands a tool round's images to a model that accepts images; null without images. */
export function toolImagesMessage(
  calls: readonly ToolCallRecord[],
  results: readonly ToolExecution[],
): ChatCompletionMessageParam | null {
  const parts: ChatCompletionContentPart[] = [];
  for (const [index, call] of calls.entries()) {
    const images = results[index]?.images ?? [];
    if (images.length === 0) continue;
    parts.push({ type: 'text', text: `[images returned by the tool call ${call.id} (${call.function.name})]` });
    for (const image of images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.data}` } });
    }
  }
  return parts.length > 0 ? { role: 'user', content: parts } : null;
}
