import type { SubagentTranscript } from '@cashcode/contracts';

import type { ToolBlockState } from '../chat-types';
import { delegateTask, viewFromBlock, viewFromTranscript } from './subagent-view';

const block = (fields: Partial<ToolBlockState>): ToolBlockState => ({
  callId: 'd1',
  streamId: 0,
  name: 'delegate',
  arguments: '{"task":"Count files"}',
  status: 'ok',
  durationMs: 10,
  result: 'Two files.',
  ...fields,
});

describe('sub-agent card view', () => {
  it('reads the task from the arguments', () => {
    expect(delegateTask('{"task":"Count files","tools":[]}')).toBe('Count files');
    expect(delegateTask('{"task":')).toBe('');
    expect(delegateTask('[]')).toBe('');
  });

  it('a block of the history shows its status until the transcript is loaded', () => {
    expect(viewFromBlock(block({}))).toEqual({ task: 'Count files', status: 'ok', steps: [], text: '', detail: null });
    expect(viewFromBlock(block({ status: 'error' })).status).toBe('failed');
    expect(viewFromBlock(block({ status: 'interrupted' })).status).toBe('interrupted');
  });

  it('a running sub-agent of a turn that ended without it is interrupted', () => {
    const subagent = { task: 't', tools: [], maxIterations: 2, status: 'running' as const, code: null, detail: null, steps: [], text: '', durationMs: null };
    expect(viewFromBlock(block({ status: 'interrupted', subagent })).status).toBe('interrupted');
  });

  it('Scenario: a delegate card reopened from history shows the transcript', () => {
    const transcript: SubagentTranscript = {
      call_id: 'd1',
      task: 'Count files',
      tools: ['list_dir', 'exec'],
      max_iterations: 4,
      outcome: 'ok',
      answer: 'Two files.',
      messages: [
        { role: 'user', content: 'Count files' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'a', name: 'list_dir', arguments: '{}' }, { id: 'b', name: 'exec', arguments: '{"command":"ls"}' }] },
        { role: 'tool', content: 'a.txt b.txt', tool_call_id: 'a', name: 'list_dir', ok: true, duration_ms: 3 },
        { role: 'assistant', content: 'Two files.' },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      started_at: '2026-01-01T00:00:00+00:00',
      duration_ms: 40,
    };
    expect(viewFromTranscript(transcript)).toEqual({
      task: 'Count files',
      status: 'ok',
      steps: [
        { callId: 'a', name: 'list_dir', arguments: '{}', status: 'ok', result: 'a.txt b.txt', durationMs: 3 },
        { callId: 'b', name: 'exec', arguments: '{"command":"ls"}', status: 'error', result: null, durationMs: null },
      ],
      text: 'Two files.',
      detail: null,
    });
    expect(viewFromTranscript({ ...transcript, outcome: 'failed', detail: 'no rounds left', answer: '' })).toMatchObject({ status: 'failed', detail: 'no rounds left' });
  });
});
