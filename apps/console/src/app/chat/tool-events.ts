/**
 * Server events about one tool call, each applied to the tool block of its call: the call starts (`tool_call`), its
 * progress and result arrive, an approval is asked for and settled, an MCP server asks the user for input. Blocks are
 * keyed by `call_id` (the original Python server's console keyed them by position and mixed up parallel calls).
 */
import type { ToolResultEvent } from '@cashcode/contracts';

import { blockFromRequest, requestOnKnownCall, resolveApproval } from './approval-state';
import type { ChatThread, ToolBlockState } from './chat-types';
import type { ServerEventHandlers } from './server-event-handler';
import { mapTools, nullableString, setElicitationStatus, withStreamingAssistant, withThread } from './thread-updates';
import { elicitationCard, type ToolProgressState } from './tool-live-state';

export const TOOL_EVENT_HANDLERS: ServerEventHandlers = {
  tool_call: (state, event) =>
    withStreamingAssistant(state, event.chat_id, (message) => {
      const callId = nullableString(event.call_id) ?? `${event.stream_id}:${message.tools.length}`;
      const block: ToolBlockState = {
        callId,
        streamId: event.stream_id,
        name: event.tool_name,
        arguments: nullableString(event.arguments) ?? '',
        status: 'running',
        durationMs: null,
        result: null,
      };
      const index = message.tools.findIndex((tool) => tool.callId === callId);
      const tools = [...message.tools];
      if (index >= 0) {
        const existing = tools[index];
        // a call still waiting for (or refused by) its approval does not run, whatever the event order
        const status = existing.status === 'awaiting' || existing.status === 'denied' ? existing.status : 'running';
        tools[index] = { ...existing, ...block, arguments: block.arguments || existing.arguments, status };
      } else tools.push(block);
      return { ...message, tools };
    }),

  tool_result: (state, event) => {
    const thread = state.threads[event.chat_id];
    if (thread && findToolBlock(thread, event) !== null) {
      return withThread(state, event.chat_id, (current) => applyToolResult(current, event));
    }
    // The call event was missed (e.g. across a reconnect): show the finished call on its own.
    return withStreamingAssistant(state, event.chat_id, (message) => ({
      ...message,
      tools: [
        ...message.tools,
        {
          callId: nullableString(event.call_id) ?? `${event.stream_id}:${message.tools.length}`,
          streamId: event.stream_id,
          name: event.tool_name,
          arguments: '',
          ...resultFields(event),
        },
      ],
    }));
  },

  approval_request: (state, event) => {
    if (typeof event.call_id !== 'string' || event.call_id === '') return state;
    // an open approval means a turn is running in that chat (also after a reload, before any other event)
    const thread = state.threads[event.chat_id];
    const known = thread ? requestOnKnownCall(thread, event) : null;
    // a repeat of a request that was settled meanwhile changes nothing
    if (known === thread) return state;
    if (known !== null) return withThread(state, event.chat_id, () => ({ ...known, generating: true }));
    const next = withStreamingAssistant(state, event.chat_id, (message) => ({
      ...message,
      tools: [...message.tools, blockFromRequest(event, message.tools.at(-1)?.streamId ?? 0)],
    }));
    return withThread(next, event.chat_id, (current) => ({ ...current, generating: true }));
  },

  approval_resolved: (state, event) => {
    const thread = state.threads[event.chat_id];
    const next = thread ? resolveApproval(thread, event) : thread;
    return next === thread ? state : withThread(state, event.chat_id, () => next);
  },

  tool_progress: (state, event) => {
    if (typeof event.progress !== 'number') return state;
    const progress: ToolProgressState = { progress: event.progress };
    if (typeof event.total === 'number') progress.total = event.total;
    if (typeof event.message === 'string') progress.message = event.message;
    return withThread(state, event.chat_id, (thread) =>
      mapTools(thread, (tool) => (tool.callId === event.call_id ? { ...tool, progress } : tool)),
    );
  },

  elicitation_request: (state, event) =>
    withThread(state, event.chat_id, (thread) =>
      mapTools(thread, (tool) =>
        tool.callId === event.call_id && tool.elicitation?.id !== event.elicitation_id
          ? { ...tool, elicitation: elicitationCard(event) }
          : tool,
      ),
    ),

  elicitation_resolved: (state, event) =>
    withThread(state, event.chat_id, (thread) => setElicitationStatus(thread, event.elicitation_id, event.action)),
};

function resultFields(event: ToolResultEvent): Pick<ToolBlockState, 'status' | 'durationMs' | 'result'> {
  return {
    status: event.ok === false ? 'error' : 'ok',
    durationMs: typeof event.duration_ms === 'number' ? event.duration_ms : null,
    result: nullableString(event.result) ?? '',
  };
}

/**
 * The block a result belongs to: by `call_id`; for servers that send none (the original server), the first running
 * block of the same turn and tool name.
 */
function findToolBlock(thread: ChatThread, event: ToolResultEvent): { message: number; tool: number } | null {
  const callId = nullableString(event.call_id);
  for (let m = thread.messages.length - 1; m >= 0; m--) {
    const tools = thread.messages[m].tools;
    const index =
      callId !== null
        ? tools.findIndex((tool) => tool.callId === callId)
        : tools.findIndex(
            (tool) => tool.streamId === event.stream_id && tool.name === event.tool_name && tool.status === 'running',
          );
    if (index >= 0) return { message: m, tool: index };
  }
  return null;
}

function applyToolResult(thread: ChatThread, event: ToolResultEvent): ChatThread {
  const found = findToolBlock(thread, event);
  if (found === null) return thread;
  const messages = [...thread.messages];
  const message = messages[found.message];
  const tools = [...message.tools];
  const fields = resultFields(event);
  // a refused call reports its refusal as a failed result: it stays "not run", not "failed"
  if (tools[found.tool].status === 'denied') fields.status = 'denied';
  tools[found.tool] = { ...tools[found.tool], ...fields };
  messages[found.message] = { ...message, tools };
  return { ...thread, messages };
}
