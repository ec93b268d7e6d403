import type { ToolCallRecord } from '../memory/memory.types';
import { notRunResult, RunawayGuard, runawayNudge, RunawayStoppedError } from './runaway-guard';
import type { ToolListener } from './tool-executor';
import type { ToolExecution } from './tool-registry';

let nextId = 0;
function call(name: string, args: string): ToolCallRecord {
  return { id: `call_${++nextId}`, type: 'function', function: { name, arguments: args } };
}
function result(text: string, ok = true): ToolExecution {
  return { name: 'x', model: text, public: text, persisted: text, ok, durationMs: 1 };
}

describe('RunawayGuard', () => {
  it('Scenario: the same call with the same result three times stops the tool calls', () => {
    const guard = new RunawayGuard();
    expect(guard.recordRound([call('read_file', '{"path":"a"}')], [result('A')])).toBeNull();
    expect(guard.recordRound([call('read_file', '{"path":"a"}')], [result('A')])).toBeNull();
    expect(guard.recordRound([call('read_file', '{"path":"a"}')], [result('A')])).toEqual({
      reason: 'repeated_call',
      tool: 'read_file',
      count: 3,
    });
    expect(guard.tripped?.reason).toBe('repeated_call');
  });

  it('counts arguments by their JSON value, not their spelling', () => {
    const guard = new RunawayGuard({ repeatLimit: 2 });
    guard.recordRound([call('grep', '{"a":1,"b":[1,2]}')], [result('r')]);
    expect(guard.recordRound([call('grep', '{ "b": [1, 2], "a": 1 }')], [result('r')])?.reason).toBe('repeated_call');
  });

  it('does not count calls whose arguments, result or outcome differ', () => {
    const guard = new RunawayGuard({ repeatLimit: 2 });
    guard.recordRound([call('read_file', '{"path":"a"}')], [result('A')]);
    expect(guard.recordRound([call('read_file', '{"path":"b"}')], [result('A')])).toBeNull();
    expect(guard.recordRound([call('read_file', '{"path":"a"}')], [result('B')])).toBeNull();
    expect(guard.recordRound([call('read_file', '{"path":"a"}')], [result('A', false)])).toBeNull();
    expect(guard.recordRound([call('list_dir', '{"path":"a"}')], [result('A')])).toBeNull();
  });

  it('Scenario: repeated identical failures stop the tool calls too', () => {
    const guard = new RunawayGuard();
    const failing = () => [result('Error: no such file', false)];
    guard.recordRound([call('read_file', '{"path":"x"}')], failing());
    guard.recordRound([call('read_file', '{"path":"x"}')], failing());
    expect(guard.recordRound([call('read_file', '{"path":"x"}')], failing())?.reason).toBe('repeated_call');
  });

  it('counts repeats inside one message', () => {
    const guard = new RunawayGuard();
    const calls = [call('echo', '{}'), call('echo', '{}'), call('echo', '{}')];
    expect(guard.recordRound(calls, [result('e'), result('e'), result('e')])?.reason).toBe('repeated_call');
  });

  it('Scenario: the turn\'s tool calls stop at the ceiling, and calls past it do not run', () => {
    const guard = new RunawayGuard({ maxToolCalls: 5 });
    expect(guard.admit(3)).toBe(3);
    expect(guard.recordRound([call('t', '1'), call('t', '2'), call('t', '3')], [result('1'), result('2'), result('3')])).toBeNull();
    expect(guard.admit(4)).toBe(2);
    const listener = { toolCall: jest.fn(), toolResult: jest.fn() } satisfies ToolListener;
    const skipped = [call('t', '6'), call('t', '7')];
    const notRun = guard.notRun(skipped, listener);
    expect(notRun).toEqual([
      { name: 't', model: notRunResult(5), public: notRunResult(5), persisted: notRunResult(5), ok: false, durationMs: 0 },
      { name: 't', model: notRunResult(5), public: notRunResult(5), persisted: notRunResult(5), ok: false, durationMs: 0 },
    ]);
    expect(listener.toolResult).toHaveBeenCalledTimes(2);
    expect(listener.toolCall).toHaveBeenCalledWith({ callId: skipped[0]?.id, name: 't', arguments: '' });
    const trip = guard.recordRound([call('t', '4'), call('t', '5'), ...skipped], [result('4'), result('5'), ...notRun]);
    expect(trip).toEqual({ reason: 'tool_call_ceiling', count: 5 });
    expect(guard.admit(1)).toBe(0);
  });

  it('keeps limits sane and gives each reason its own instruction and error', () => {
    expect(new RunawayGuard({ repeatLimit: 0, maxToolCalls: 0 }).limits).toEqual({ repeatLimit: 2, maxToolCalls: 1 });
    expect(new RunawayGuard().limits).toEqual({ repeatLimit: 3, maxToolCalls: 50 });
    expect(new RunawayGuard({ repeatLimit: Infinity, maxToolCalls: Number.NaN }).limits).toEqual({ repeatLimit: 3, maxToolCalls: 50 });
    expect(runawayNudge({ reason: 'repeated_call', tool: 'grep', count: 3 })).toBe(
      '[System] The tool grep was called 3 times with the same arguments and gave the same result each time. Tools are ' +
        'no longer available in this turn. Answer now with what you have, and say what is left undone.',
    );
    expect(runawayNudge({ reason: 'tool_call_ceiling', count: 50 })).toContain('limit of 50 tool calls');
    const error = new RunawayStoppedError({ reason: 'tool_call_ceiling', count: 50 });
    expect(error.code).toBe('runaway_stopped');
    expect(error.message).toContain('limit of 50 tool calls');
  });
});
