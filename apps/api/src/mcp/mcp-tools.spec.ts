import { formatCallResult, MAX_RESULT_CHARS } from './mcp-tools';

describe('formatCallResult', () => {
  it('Scenario: text blocks are joined; other blocks are described', () => {
    const result = formatCallResult('mcp_s_t', {
      content: [
        { type: 'text', text: 'a' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///x', name: 'x' },
        { type: 'text', text: 'b' },
      ],
    });
    expect(result).toEqual({ model: 'a\n[image: image/png, 3 bytes]\n[resource link: file:///x (x)]\nb', ok: true });
  });

  it('Scenario: structured content is added unless the text already carries it', () => {
    expect(formatCallResult('t', { content: [{ type: 'text', text: 'OK' }], structuredContent: { a: 1 } }).model).toBe(
      'OK\n\nStructured content: {"a":1}',
    );
    expect(formatCallResult('t', { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } }).model).toBe('{"a":1}');
  });

  it('Scenario: empty output and errors', () => {
    expect(formatCallResult('t', { content: [] })).toEqual({ model: '(no output)', ok: true });
    expect(formatCallResult('mcp_s_t', { content: [{ type: 'text', text: 'bad' }], isError: true })).toEqual({
      model: "Error: MCP tool 'mcp_s_t' reported an error: bad",
      ok: false,
    });
  });

  it('Scenario: huge results are truncated with a marker', () => {
    const model = formatCallResult('t', { content: [{ type: 'text', text: 'x'.repeat(MAX_RESULT_CHARS + 10) }] }).model;
    expect(model.endsWith(`[output truncated, ${MAX_RESULT_CHARS + 10} characters in total]`)).toBe(true);
  });
});
