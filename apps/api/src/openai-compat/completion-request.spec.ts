import { parseCompletionRequest, MAX_USER_CHARS } from './completion-request';

function errorOf(body: unknown): { status: number; code: string; param: string | null } {
  const result = parseCompletionRequest(body);
  if (result.ok) throw new Error('expected an error');
  return { status: result.error.status, code: result.error.code, param: result.error.param };
}

describe('parseCompletionRequest', () => {
  const user = { role: 'user', content: 'hi' };

  it('maps roles and content parts to the agent messages, developer as system', () => {
    const result = parseCompletionRequest({
      model: ' cashcode ',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
      ],
    });
    expect(result).toEqual({
      ok: true,
      request: {
        model: 'cashcode',
        stream: false,
        includeUsage: false,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'a\nb' },
          { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
          { role: 'tool', content: 'result', tool_call_id: 'c1', name: '' },
        ],
      },
    });
  });

  it('reads stream, include_usage, sampling options and user; ignores unknown fields', () => {
    const result = parseCompletionRequest({
      model: 'cashcode',
      messages: [user],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0,
      max_tokens: 10,
      max_completion_tokens: 20,
      user: 'alice',
      n: 1,
      tools: [{ type: 'function' }],
      whatever: { deep: true },
    });
    expect(result.ok && result.request).toEqual({
      model: 'cashcode',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      includeUsage: true,
      temperature: 0,
      maxTokens: 20,
      user: 'alice',
    });
  });

  it.each([
    ['a non-object body', 'text', 'invalid_json', 'body'],
    ['a missing model', { messages: [user] }, 'missing_required_parameter', 'model'],
    ['a blank model', { model: '  ', messages: [user] }, 'invalid_type', 'model'],
    ['missing messages', { model: 'm' }, 'missing_required_parameter', 'messages'],
    ['messages not an array', { model: 'm', messages: {} }, 'invalid_type', 'messages'],
    ['no messages', { model: 'm', messages: [] }, 'invalid_value', 'messages'],
    ['a message that is no object', { model: 'm', messages: ['hi'] }, 'invalid_type', 'messages[0]'],
    ['an unknown role', { model: 'm', messages: [{ role: 'function', content: 'x' }] }, 'invalid_value', 'messages[0].role'],
    ['user content missing', { model: 'm', messages: [{ role: 'user' }] }, 'missing_required_parameter', 'messages[0].content'],
    ['user content a number', { model: 'm', messages: [{ role: 'user', content: 1 }] }, 'invalid_type', 'messages[0].content'],
    ['a part without type', { model: 'm', messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'invalid_type', 'messages[0].content[0]'],
    ['a text part without text', { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'invalid_type', 'messages[0].content[0].text'],
    ['an image part', { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }, 'unsupported_content', 'messages[0].content[0].type'],
    ['a tool message without call id', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, 'missing_required_parameter', 'messages[0].tool_call_id'],
    ['bad tool calls', { model: 'm', messages: [{ role: 'assistant', content: '', tool_calls: [{}] }] }, 'invalid_type', 'messages[0].tool_calls[0]'],
    ['stream not a boolean', { model: 'm', messages: [user], stream: 1 }, 'invalid_type', 'stream'],
    ['stream_options not an object', { model: 'm', messages: [user], stream_options: 'x' }, 'invalid_type', 'stream_options'],
    ['include_usage not a boolean', { model: 'm', messages: [user], stream_options: { include_usage: 'y' } }, 'invalid_type', 'stream_options.include_usage'],
    ['n of 2', { model: 'm', messages: [user], n: 2 }, 'invalid_value', 'n'],
    ['a temperature out of range', { model: 'm', messages: [user], temperature: 2.5 }, 'invalid_value', 'temperature'],
    ['a temperature string', { model: 'm', messages: [user], temperature: '1' }, 'invalid_type', 'temperature'],
    ['a fractional max_tokens', { model: 'm', messages: [user], max_tokens: 1.5 }, 'invalid_type', 'max_tokens'],
    ['a zero max_completion_tokens', { model: 'm', messages: [user], max_completion_tokens: 0 }, 'invalid_value', 'max_completion_tokens'],
    ['a user that is no string', { model: 'm', messages: [user], user: 5 }, 'invalid_type', 'user'],
    ['a too long user', { model: 'm', messages: [user], user: 'u'.repeat(MAX_USER_CHARS + 1) }, 'invalid_value', 'user'],
  ])('refuses %s with 400', (_name, body, code, param) => {
    expect(errorOf(body)).toEqual({ status: 400, code, param });
  });
});
