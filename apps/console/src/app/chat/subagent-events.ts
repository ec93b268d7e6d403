/**
 * Server events about a sub-agent (openspec subagents): `subagent_started`, `subagent_event` (the child's tool call,
 * tool result or answer text) and `subagent_done`, each applied to the tool block of the parent's `delegate` call
 * (by its `call_id`), which the nested card (subagent-card/) shows. A request for the owner's approval from a child
 * arrives as a plain `approval_request` naming the sub-agent (approval-state.ts).
 */
import type { SubagentInnerEvent } from '@cashcode/contracts';

import type { ChatThread, SubagentState, SubagentStepState, ToolBlockState } from './chat-types';
import type { ServerEventHandlers } from './server-event-handler';
import { mapTools, nullableString, withThread } from './thread-updates';

/** `update` applied to the sub-agent of the `delegate` block of `callId` (a thread without one is unchanged). */
function updateSubagent(thread: ChatThread, callId: string, update: (subagent: SubagentState, tool: ToolBlockState) => SubagentState): ChatThread {
  return mapTools(thread, (tool) => (tool.callId === callId && tool.subagent ? { ...tool, subagent: update(tool.subagent, tool) } : tool));
}

/** The child's step for one inner event. */
export function applyInner(subagent: SubagentState, inner: SubagentInnerEvent): SubagentState {
  switch (inner.event) {
    case 'delta':
      return typeof inner.text === 'string' ? { ...subagent, text: subagent.text + inner.text } : subagent;
    case 'tool_call': {
      if (subagent.steps.some((step) => step.callId === inner.call_id)) return subagent;
      const step: SubagentStepState = {
        callId: String(inner.call_id),
        name: String(inner.tool_name),
        arguments: nullableString(inner.arguments) ?? '',
        status: 'running',
        result: null,
        durationMs: null,
      };
      // text streamed before a round of calls was not the answer
      return { ...subagent, text: '', steps: [...subagent.steps, step] };
    }
    case 'tool_result': {
      const finished = (step: SubagentStepState): SubagentStepState => ({
        ...step,
        status: inner.ok === false ? 'error' : 'ok',
        result: nullableString(inner.result) ?? '',
        durationMs: typeof inner.duration_ms === 'number' ? inner.duration_ms : null,
      });
      const known = subagent.steps.some((step) => step.callId === inner.call_id);
      const steps = known
        ? subagent.steps.map((step) => (step.callId === inner.call_id ? finished(step) : step))
        : [...subagent.steps, finished({ callId: String(inner.call_id), name: String(inner.tool_name), arguments: '', status: 'running', result: null, durationMs: null })];
      return { ...subagent, steps };
    }
    default:
      return subagent;
  }
}

export const SUBAGENT_EVENT_HANDLERS: ServerEventHandlers = {
  subagent_started: (state, event) =>
    withThread(state, event.chat_id, (thread) =>
      mapTools(thread, (tool) =>
        tool.callId === event.call_id
          ? {
              ...tool,
              subagent: {
                task: nullableString(event.task) ?? '',
                tools: Array.isArray(event.tools) ? event.tools.filter((name) => typeof name === 'string') : [],
                maxIterations: typeof event.max_iterations === 'number' ? event.max_iterations : 0,
                status: 'running',
                code: null,
                detail: null,
                steps: [],
                text: '',
                durationMs: null,
              },
            }
          : tool,
      ),
    ),

  subagent_event: (state, event) => {
    if (typeof event.inner !== 'object' || event.inner === null) return state;
    return withThread(state, event.chat_id, (thread) => updateSubagent(thread, event.call_id, (subagent) => applyInner(subagent, event.inner)));
  },

  subagent_done: (state, event) =>
    withThread(state, event.chat_id, (thread) =>
      updateSubagent(thread, event.call_id, (subagent) => ({
        ...subagent,
        status: event.outcome === 'ok' || event.outcome === 'cancelled' ? event.outcome : 'failed',
        code: nullableString(event.code),
        detail: nullableString(event.detail),
        durationMs: typeof event.duration_ms === 'number' ? event.duration_ms : null,
        // a step still running when its sub-agent ended did not finish
        steps: subagent.steps.map((step) => (step.status === 'running' ? { ...step, status: 'error' } : step)),
      })),
    ),
};
