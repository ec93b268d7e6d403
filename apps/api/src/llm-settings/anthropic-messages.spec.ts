import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { anthropicConversation, anthropicRequest, anthropicToolId } from './anthropic-messages';
import type { GatewayMessage } from './gateway-attempts';

const tool = (name: string): ChatCompletionFunctionTool => ({
  type: 'function',
  function: { name, description: `${name} tool`, parameters: { type: 'object', properties: {} } },
});

const conversation: GatewayMessage[] = [
  { role: 'system', content: 'You are CashCode.' },
  { role: 'user', content: 'List the files' },
  {
    role: 'assistant',
    content: '[TOOL_CALLS: list_dir]',
    tool_calls: [{ id: 'call.1', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }],
  },
  { role: 'tool', tool_call_id: 'call.1', content: 'a.txt' },
  { role: 'assistant', content: 'There is a.txt.' },
  { role: 'system', content: 'Selected Skill: notes' },
  { role: 'user', content: 'Thanks' },
];

describe('anthropicConversation', () => {
  it('maps system, tool calls and results, merges a later system note into the user turn', () => {
    const { system, turns } = anthropicConversation(conversation);
    expect(system).toEqual([{ type: 'text', text: 'You are CashCode.' }]);
    expect(turns).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'List the files' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'list_dir', input: { path: '.' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'There is a.txt.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Selected Skill: notes' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('opens an assistant message with its replayed thinking blocks, unchanged', () => {
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
    const { turns } = anthropicConversation([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: '[TOOL_CALLS: t]',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 't', arguments: 'not json' } }],
        replay: [thinking, { type: 'text', text: 'ignored' }],
      },
    ]);
    expect(turns[1]).toEqual({ role: 'assistant', content: [thinking, { type: 'tool_use', id: 'toolu_1', name: 't', input: {} }] });
  });

  it('keeps safe tool ids as they are and replaces other characters', () => {
    expect(anthropicToolId('toolu_01-AbC')).toBe('toolu_01-AbC');
    expect(anthropicToolId('call:1/2')).toBe('call_1_2');
    expect(anthropicToolId('')).toBe('call');
  });
});

describe('anthropicRequest', () => {
  it('Scenario: Anthropic cache breakpoints sit on the tools, the system prompt and the two latest conversation ends', () => {
    const params = anthropicRequest(conversation, [tool('a'), tool('b')], { model: 'claude-x', maxTokens: 1000 });
    expect(params.tools?.map((entry) => 'cache_control' in entry)).toEqual([false, true]);
    expect(params.system).toEqual([{ type: 'text', text: 'You are CashCode.', cache_control: { type: 'ephemeral' } }]);
    const marks = params.messages.flatMap((turn, i) =>
      (turn.content as unknown as Array<Record<string, unknown>>).flatMap((block, j) => ('cache_control' in block ? [`${i}.${j}`] : [])),
    );
    // the end of the conversation and the end of the user turn before it
    expect(marks).toEqual(['2.0', '4.1']);
    expect(params.thinking).toBeUndefined();
    expect(params.stream).toBe(true);
  });

  it('turns extended thinking on with its budget', () => {
    const params = anthropicRequest(conversation, [], { model: 'claude-x', maxTokens: 9000, thinkingBudget: 4096 });
    expect(params.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(params.max_tokens).toBe(9000);
    expect(params.tools).toBeUndefined();
  });
});
