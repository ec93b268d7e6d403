/**
 * The listener of a sub-agent's run (openspec subagents "Requirement: Progress events"): its answer text, tool calls
 * and tool results reach the parent's listener wrapped as `subagent_event` notices naming the parent's `delegate`
 * call; its approval requests and decisions and its MCP elicitations go to the parent chat as they are (the owner
 * answers them through the same protocol; the request names the sub-agent); a grandchild's notices pass through.
 * Reasoning and progress reports stay inside the child.
 */
import type { SubagentInnerEvent, SubagentRef } from '@cashcode/contracts';
import type { RunnerListener } from '../agent-runner';

export function childListener(parent: RunnerListener, ref: SubagentRef): RunnerListener {
  const wrap = (inner: SubagentInnerEvent) => parent.subagent?.({ event: 'subagent_event', call_id: ref.call_id, inner });
  return {
    delta: (text) => wrap({ event: 'delta', text }),
    toolCall: (notice) => wrap({ event: 'tool_call', tool_name: notice.name, call_id: notice.callId, arguments: notice.arguments }),
    toolResult: (notice) =>
      wrap({
        event: 'tool_result',
        tool_name: notice.name,
        call_id: notice.callId,
        result: notice.result,
        ok: notice.ok,
        duration_ms: notice.durationMs,
      }),
    approvalRequest: (event) => parent.approvalRequest?.(event),
    approvalResolved: (event) => parent.approvalResolved?.(event),
    elicitation: (event) => parent.elicitation?.(event),
    subagent: (notice) => parent.subagent?.(notice),
  };
}
