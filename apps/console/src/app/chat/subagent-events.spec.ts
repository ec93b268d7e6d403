import type { ServerEvent } from '@cashcode/contracts';

import type { ChatState, ToolBlockState } from './chat-types';
import { reduceServerEvent } from './server-events';
import { activateChat, userMessageSent } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const LLM = { llm: { provider: 'openai_compatible' as const, model: 'm1' } };
const apply = (state: ChatState, ...events: ServerEvent[]) => events.reduce(reduceServerEvent, state);
const base = () => userMessageSent(activateChat(INITIAL_CHAT_STATE, 'c1', true), 'c1', 'hello', LLM);
const tools = (state: ChatState): ToolBlockState[] => state.threads['c1']!.messages.flatMap((m) => m.tools);
const ev = (event: Record<string, unknown>): ServerEvent => ({ chat_id: 'c1', stream_id: 7, ...event }) as unknown as ServerEvent;

const delegateCall = ev({ event: 'tool_call', tool_name: 'delegate', call_id: 'd1', arguments: '{"task":"Count files"}' });
const started = ev({ event: 'subagent_started', call_id: 'd1', task: 'Count files', tools: ['list_dir'], max_iterations: 4 });
const inner = (inner: Record<string, unknown>) => ev({ event: 'subagent_event', call_id: 'd1', inner });

describe('sub-agent events', () => {
  it('Scenario: the delegate card follows its sub-agent live', () => {
    let state = apply(base(), delegateCall, started, inner({ event: 'delta', text: 'Let me look. ' }));
    expect(tools(state)[0]!.subagent).toMatchObject({ task: 'Count files', tools: ['list_dir'], maxIterations: 4, status: 'running', text: 'Let me look. ' });

    state = apply(
      state,
      inner({ event: 'tool_call', tool_name: 'list_dir', call_id: 'c9', arguments: '{"path":"."}' }),
      inner({ event: 'tool_result', tool_name: 'list_dir', call_id: 'c9', result: 'a.txt b.txt', ok: true, duration_ms: 4 }),
      inner({ event: 'delta', text: 'Two ' }),
      inner({ event: 'delta', text: 'files.' }),
    );
    const subagent = tools(state)[0]!.subagent!;
    // text before a round of calls was not the answer
    expect(subagent.text).toBe('Two files.');
    expect(subagent.steps).toEqual([{ callId: 'c9', name: 'list_dir', arguments: '{"path":"."}', status: 'ok', result: 'a.txt b.txt', durationMs: 4 }]);
    // the child's calls never become blocks of the parent
    expect(tools(state).map((tool) => tool.callId)).toEqual(['d1']);

    state = apply(state, ev({ event: 'subagent_done', call_id: 'd1', outcome: 'ok', tool_calls: 1, duration_ms: 30, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    expect(tools(state)[0]!.subagent).toMatchObject({ status: 'ok', durationMs: 30 });
  });

  it('a failed sub-agent keeps its code and detail; its unfinished calls did not finish', () => {
    const state = apply(
      base(),
      delegateCall,
      started,
      inner({ event: 'tool_call', tool_name: 'exec', call_id: 'x', arguments: '{}' }),
      ev({ event: 'subagent_done', call_id: 'd1', outcome: 'failed', code: 'iteration_limit', detail: 'out of rounds', tool_calls: 1, duration_ms: 3, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }),
    );
    expect(tools(state)[0]!.subagent).toMatchObject({ status: 'failed', code: 'iteration_limit', detail: 'out of rounds', steps: [{ callId: 'x', status: 'error' }] });
  });

  it('events for an unknown call or with a malformed inner event change nothing', () => {
    const state = apply(base(), delegateCall, started);
    expect(apply(state, ev({ event: 'subagent_event', call_id: 'zz', inner: { event: 'delta', text: 'x' } }))).toEqual(state);
    expect(apply(state, ev({ event: 'subagent_event', call_id: 'd1', inner: null }))).toEqual(state);
  });

  it('an approval request of a sub-agent names it on the card', () => {
    const state = apply(
      base(),
      delegateCall,
      started,
      ev({ event: 'approval_request', call_id: 'call_abc', tool: 'exec', risk: 'exec', arguments: '{"command":"ls"}', expires_at: '2026-01-01T00:00:00Z', subagent: { call_id: 'd1', task: 'Count files' } }),
    );
    expect(tools(state).find((tool) => tool.callId === 'call_abc')?.approval?.subagent).toEqual({ callId: 'd1', task: 'Count files' });
  });
});
