/**
 * How a turn's progress becomes WebSocket events: the runner's notices (text deltas, tool calls, tool results,
 * approval requests and decisions) and the end of a turn (`stream_end`, then `done`). Every event names its chat;
 * the streaming ones carry the turn's stream id.
 */
import type { Money, ServerEvent, TokenUsage } from '@cashcode/contracts';
import type { RunnerListener } from '../agent/agent-runner';

/** The runner listener of one turn: each notice becomes one event, passed to `emit` as it happens. */
export function turnEventsListener(chatId: string, streamId: number, emit: (event: ServerEvent) => void): RunnerListener {
  return {
    delta: (text) => emit({ event: 'delta', chat_id: chatId, text, stream_id: streamId }),
    reasoning: (text) => emit({ event: 'reasoning', chat_id: chatId, text, stream_id: streamId }),
    toolCall: (notice) =>
      emit({
        event: 'tool_call',
        chat_id: chatId,
        tool_name: notice.name,
        stream_id: streamId,
        call_id: notice.callId,
        arguments: notice.arguments,
      }),
    toolProgress: (notice) =>
      emit({
        event: 'tool_progress',
        chat_id: chatId,
        call_id: notice.callId,
        tool_name: notice.name,
        stream_id: streamId,
        progress: notice.progress,
        ...(notice.total !== undefined ? { total: notice.total } : {}),
        ...(notice.message !== undefined ? { message: notice.message } : {}),
      }),
    elicitation: (event) => emit(event),
    // a sub-agent's progress (openspec subagents): the notice with the turn's chat and stream
    subagent: (notice) => emit({ ...notice, chat_id: chatId, stream_id: streamId } as ServerEvent),
    approvalRequest: (event) => emit(event),
    approvalResolved: (event) => emit(event),
    toolResult: (notice) =>
      emit({
        event: 'tool_result',
        chat_id: chatId,
        tool_name: notice.name,
        result: notice.result,
        stream_id: streamId,
        call_id: notice.callId,
        ok: notice.ok,
        duration_ms: notice.durationMs,
      }),
  };
}

/** The events that end a turn which ran (completed or cancelled): `stream_end`, then `done`. */
export function turnEndEvents(
  chatId: string,
  streamId: number,
  end: { durationSec: number; usage: TokenUsage; cancelled: boolean; cost?: Money; truncated?: boolean },
): ServerEvent[] {
  return [
    { event: 'stream_end', chat_id: chatId, stream_id: streamId },
    {
      event: 'done',
      chat_id: chatId,
      duration_sec: end.durationSec,
      usage: end.usage,
      cancelled: end.cancelled,
      ...(end.cost ? { cost: end.cost } : {}),
      ...(end.truncated ? { truncated: true } : {}),
    },
  ];
}
