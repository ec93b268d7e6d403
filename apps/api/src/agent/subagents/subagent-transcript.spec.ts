import type { ChatMessage } from '../../common/chat-message';
import { parseTranscript, toolAccount, transcriptMessages } from './subagent-transcript';

const round: ChatMessage[] = [
  { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
  { role: 'tool', content: 'text', tool_call_id: 'a', name: 'read_file', ok: true, duration_ms: 3 },
  { role: 'tool', content: 'Error: no', tool_call_id: 'b', name: 'exec', ok: false },
];

describe('sub-agent transcripts', () => {
  it('keeps the task, the tool rounds and the answer', () => {
    expect(transcriptMessages('task', round, 'answer')).toEqual([
      { role: 'user', content: 'task' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'a', name: 'read_file', arguments: '{}' }] },
      { role: 'tool', content: 'text', tool_call_id: 'a', name: 'read_file', ok: true, duration_ms: 3 },
      { role: 'tool', content: 'Error: no', tool_call_id: 'b', name: 'exec', ok: false },
      { role: 'assistant', content: 'answer' },
    ]);
  });

  it('accounts for the tool calls in one line, the first twenty named', () => {
    expect(toolAccount([])).toBe('no tool calls');
    expect(toolAccount(round)).toBe('2 tool calls: read_file ok, exec failed');
    const many = Array.from({ length: 22 }, (_, i): ChatMessage => ({ role: 'tool', content: '', tool_call_id: `${i}`, name: 'glob' }));
    expect(toolAccount(many)).toMatch(/^22 tool calls: (glob ok, ){19}glob ok, and 2 more$/);
  });

  it('reads back only a transcript', () => {
    expect(parseTranscript('not json')).toBeNull();
    expect(parseTranscript('[1]')).toBeNull();
    expect(parseTranscript('{"call_id":"x","messages":[]}')).toMatchObject({ call_id: 'x' });
  });
});
