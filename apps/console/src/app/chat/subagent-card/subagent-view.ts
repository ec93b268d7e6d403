/**
 * What the nested card of a `delegate` call shows (openspec console "Requirement: Sub-agent card"): the task, the
 * status, the child's tool calls and its answer — live from the `subagent_*` events while it runs, or from its stored
 * transcript once the turn is history. Pure functions, tested in subagent-view.spec.ts.
 */
import { isRecord, type SubagentTranscript } from '@cashcode/contracts';

import type { SubagentStepState, ToolBlockState } from '../chat-types';

export type SubagentCardStatus = 'running' | 'ok' | 'failed' | 'cancelled' | 'interrupted';

export interface SubagentView {
  task: string;
  status: SubagentCardStatus;
  steps: SubagentStepState[];
  /** the answer (or the text streamed so far) */
  text: string;
  /** failed: why */
  detail: string | null;
}

/** The task a `delegate` call's arguments give ('' when they say none). */
export function delegateTask(rawArguments: string): string {
  try {
    const value: unknown = JSON.parse(rawArguments);
    return isRecord(value) && typeof value['task'] === 'string' ? value['task'] : '';
  } catch {
    return '';
  }
}

/** The card from the tool block alone: live state when the block has it, else the block's own status. */
export function viewFromBlock(tool: ToolBlockState): SubagentView {
  const live = tool.subagent;
  if (live) {
    const status: SubagentCardStatus = live.status === 'running' && tool.status === 'interrupted' ? 'interrupted' : live.status;
    return { task: live.task, status, steps: live.steps, text: live.text, detail: live.detail };
  }
  const status: SubagentCardStatus =
    tool.status === 'ok' ? 'ok' : tool.status === 'error' || tool.status === 'denied' ? 'failed' : tool.status === 'running' || tool.status === 'awaiting' ? 'running' : 'interrupted';
  return { task: delegateTask(tool.arguments), status, steps: [], text: '', detail: null };
}

/** The card from a stored transcript: each tool call with its result, and the answer. */
export function viewFromTranscript(transcript: SubagentTranscript): SubagentView {
  const steps: SubagentStepState[] = [];
  for (const message of transcript.messages ?? []) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        steps.push({ callId: call.id, name: call.name, arguments: call.arguments, status: 'running', result: null, durationMs: null });
      }
    } else if (message.role === 'tool') {
      const index = steps.findIndex((step) => step.callId === message.tool_call_id);
      if (index < 0) continue;
      steps[index] = {
        ...steps[index],
        status: message.ok === false ? 'error' : 'ok',
        result: message.content,
        durationMs: typeof message.duration_ms === 'number' ? message.duration_ms : null,
      };
    }
  }
  const status: SubagentCardStatus = transcript.outcome === 'ok' ? 'ok' : transcript.outcome === 'cancelled' ? 'cancelled' : 'failed';
  // a call without a result did not finish
  const settled = steps.map((step): SubagentStepState => (step.status === 'running' ? { ...step, status: 'error' } : step));
  return { task: transcript.task, status, steps: settled, text: transcript.answer, detail: transcript.detail ?? null };
}
