/**
 * One round of tool calls of the agent loop (agent-runner.ts): the calls the runaway guard admits run through the
 * ToolExecutor (the rest get its "not run" result), then the round joins the conversation sent to the model and the
 * turn's persisted messages, all of its results at once (a cancel keeps complete rounds only).
 */
import { toolCallsContent } from '../memory/history-record';
import type { ChatMessage } from '../memory/memory.types';
import type { RunRequest } from './agent-run';
import type { ModelAnswer, WireMessage } from './model-gateway';
import type { RunawayGuard } from './runaway-guard';
import type { ToolExecutor } from './tool-executor';
import type { ToolExecution, ToolScope } from './tool-registry';
import type { TurnState } from './turn-state';
import type { UntrustedContext } from './untrusted-context';
import { toolImagesMessage, toWireMessage } from './wire-messages';

/** What stays the same over the rounds of one run. */
export interface RoundContext {
  request: RunRequest;
  state: TurnState;
  scope: ToolScope;
  untrusted: UntrustedContext;
  guard: RunawayGuard;
  /** the conversation as sent to the model; the round is appended to it */
  wire: WireMessage[];
}

/** Runs the tool calls of `call` (a model answer with tool calls) and records the round; resolves with its results. */
export async function runToolRound(executor: ToolExecutor, ctx: RoundContext, call: ModelAnswer): Promise<ToolExecution[]> {
  const { request, state, wire, guard } = ctx;
  const child = request.child;
  const assistant: ChatMessage = { role: 'assistant', content: call.content, tool_calls: call.toolCalls };
  // the calls past the turn's ceiling do not run (runaway-guard.ts)
  const admitted = guard.admit(call.toolCalls.length);
  const ran = await executor.executeCalls(
    {
      chatId: request.chatId,
      turnId: request.turnId,
      signal: request.signal,
      headless: request.headless === true,
      ...(request.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
      scope: ctx.scope,
      ids: state.ids,
      listener: request.listener,
      untrusted: ctx.untrusted,
      ...(child ? { subagent: child.ref } : {}),
    },
    call.toolCalls.slice(0, admitted),
  );
  const results = [...ran, ...guard.notRun(call.toolCalls.slice(admitted), request.listener)];
  // a tool round becomes part of the turn only once every result is in (cancel keeps complete rounds only). The
  // model gets the tool-call message as the history will give it back on the next turn (the `tool_calls` record's
  // `[TOOL_CALLS: …]` content, sent as ""), so the next turn's request starts with this one's bytes (a cacheable prefix)
  // `replay` (thinking blocks, a reasoning field) goes back within this turn only, as the provider requires
  const sent: WireMessage = toWireMessage({ ...assistant, content: toolCallsContent(call.toolCalls) });
  wire.push(call.replay !== undefined ? { ...sent, replay: call.replay } : sent);
  state.durable.push(assistant);
  for (const [index, toolCall] of call.toolCalls.entries()) {
    const result = results[index] as ToolExecution;
    state.counts.toolCalls++;
    if (!result.ok) state.counts.failedToolCalls++;
    wire.push({ role: 'tool', content: result.model, tool_call_id: toolCall.id });
    state.durable.push({
      role: 'tool',
      content: result.persisted,
      tool_call_id: toolCall.id,
      name: toolCall.function.name,
      ok: result.ok,
      duration_ms: result.durationMs,
    });
  }
  // OpenAI tool messages hold text only: the images of the round follow as one user message, never persisted
  const images = request.acceptsImages === true ? toolImagesMessage(call.toolCalls, results) : null;
  if (images) wire.push(images);
  state.currentContent = '';
  return results;
}
