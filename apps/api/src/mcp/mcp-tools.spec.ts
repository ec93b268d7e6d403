import { formatCallResult, formatResourceContents, formatSize, MAX_RESOURCE_CHARS, MAX_RESULT_CHARS } from './mcp-tools';

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
    expect(result).toEqual({
      model: 'a\n[image: image/png, 3 bytes]\n[resource link: file:///x (x) — read it with mcp_read_resource]\nb',
      ok: true,
      images: [{ mimeType: 'image/png', data: 'AAAA' }],
    });
  });

  it('Scenario: structured content is added unless the text already carries it', () => {
    expect(formatCallResult('t', { content: [{ type: 'text', text: 'OK' }], structuredContent: { a: 1 } }).model).toBe(
      'OK\n\nStructured content: {"a":1}',
    );
    expect(formatCallResult('t', { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } }).model).toBe('{"a":1}');
  });

  it('Scenario: pretty-printed JSON equal to the structured content is sent once', () => {
    const structuredContent = { temperature: 33, conditions: 'Cloudy', humidity: 82 };
    const text = JSON.stringify({ humidity: 82, conditions: 'Cloudy', temperature: 33 }, null, 2);
    expect(formatCallResult('t', { content: [{ type: 'text', text }], structuredContent }).model).toBe(text);
    expect(formatCallResult('t', { content: [{ type: 'text', text: '{"temperature":34}' }], structuredContent }).model).toContain(
      'Structured content: ',
    );
  });

  it('Scenario: a large image becomes a short placeholder, never base64', () => {
    const data = Buffer.alloc(120 * 1024, 7).toString('base64');
    const result = formatCallResult('t', { content: [{ type: 'image', data, mimeType: 'image/png' }] });
    expect(result.model).toBe('[image: image/png, 120 KB]');
    expect(result.images).toEqual([{ mimeType: 'image/png', data }]);
    expect(formatSize(5 * 1024 * 1024)).toBe('5.0 MB');
  });

  it('Scenario: embedded resources keep their URI and MIME type; blobs are type and size', () => {
    const model = formatCallResult('t', {
      content: [
        { type: 'resource', resource: { uri: 'demo://a.txt', mimeType: 'text/plain', text: 'hello' } },
        { type: 'resource', resource: { uri: 'demo://b.bin', mimeType: 'application/gzip', blob: Buffer.alloc(2048).toString('base64') } },
      ],
    }).model;
    expect(model).toBe('[resource: demo://a.txt (text/plain)]\nhello\n[resource: demo://b.bin (application/gzip, 2 KB)]');
  });

  it('Scenario: a read resource is bounded and binary content is described', () => {
    const long = formatResourceContents({ contents: [{ uri: 'demo://t', text: 'y'.repeat(MAX_RESOURCE_CHARS + 5) }] });
    expect(long.endsWith(`characters in total]`)).toBe(true);
    expect(formatResourceContents({ contents: [{ uri: 'demo://p', mimeType: 'image/png', blob: 'AAAA' }] })).toBe(
      '[resource: demo://p (image/png, 3 bytes); binary content is not shown]',
    );
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
