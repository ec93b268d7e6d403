import { McpError } from './mcp.errors';
import { MCP_VALIDATION_MESSAGES as M, validateHeaders, validateServerName, validateUrl, validateUserEntry } from './mcp-validation';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe('validation');
    return (error as McpError).message;
  }
  throw new Error('expected a validation error');
}

describe('MCP catalog validation', () => {
  it('Scenario: names are trimmed and must match the pattern', () => {
    expect(validateServerName('  web-search_2 ')).toBe('web-search_2');
    expect(messageOf(() => validateServerName(7))).toBe(M.name);
    expect(messageOf(() => validateServerName('_a'))).toBe(M.name);
  });

  it('Scenario: URLs must be absolute http(s) without credentials', () => {
    expect(validateUrl('  https://example.com:8443/mcp?x=1 ')).toBe('https://example.com:8443/mcp?x=1');
    expect(messageOf(() => validateUrl('javascript:alert(1)'))).toBe(M.urlAbsolute);
    expect(messageOf(() => validateUrl('http://'))).toBe(M.urlAbsolute);
    expect(messageOf(() => validateUrl('http://@example.com/'))).toBe(M.urlCredentials);
    expect(messageOf(() => validateUrl('https://token@example.com/'))).toBe(M.urlCredentials);
  });

  it('Scenario: a masked value keeps the stored value of the same header (case-insensitive)', () => {
    const stored = { values: { 'X-Key': 'stored-secret' }, binding: 'https://mcp.example' };
    expect(validateHeaders({ 'x-key': '********', ' X-New ': 'v' }, stored, 'https://mcp.example')).toEqual({
      'x-key': 'stored-secret',
      'X-New': 'v',
    });
    expect(messageOf(() => validateHeaders({ 'X-Other': '********' }, stored, 'https://mcp.example'))).toBe(M.headerMasked('X-Other'));
    expect(messageOf(() => validateHeaders({ 'X-Key': '********' }, null, 'https://mcp.example'))).toBe(M.headerMasked('X-Key'));
  });

  it('Scenario: a masked value is refused when the URL moved to another origin', () => {
    const stored = { url: 'https://mcp.example/sse', headers: { Authorization: 'Bearer stored-secret' } };
    const entry = (url: string, headers: Record<string, string>) => () =>
      validateUserEntry({ display_name: 'W', url, headers }, stored);
    // same origin in other spellings, another path: kept
    for (const url of ['https://mcp.example/mcp', 'HTTPS://MCP.EXAMPLE.:443/sse']) {
      expect(entry(url, { Authorization: '********' })().headers).toEqual({ Authorization: 'Bearer stored-secret' });
    }
    // another host, scheme or port: refused on the header's field; a new value is fine
    for (const url of ['https://evil.example/sse', 'http://mcp.example/sse', 'https://mcp.example:8443/sse']) {
      expect(messageOf(entry(url, { authorization: '********' }))).toBe(M.headerOriginMoved('authorization'));
      try {
        entry(url, { authorization: '********' })();
      } catch (error) {
        expect((error as McpError).field).toBe('headers.authorization');
      }
      expect(entry(url, { Authorization: 'Bearer new' })().headers).toEqual({ Authorization: 'Bearer new' });
    }
  });

  it('Scenario: a user entry defaults to sse, trims texts, and accepts displayName', () => {
    expect(validateUserEntry({ displayName: ' Web ', url: 'http://a.b/sse', description: ' d ' }, null)).toEqual({
      type: 'sse',
      displayName: 'Web',
      description: 'd',
      url: 'http://a.b/sse',
      headers: {},
      command: '',
      args: [],
      env: {},
      cwd: '',
    });
    expect(validateUserEntry({ type: 'streamable_http', display_name: 'W', url: 'http://a.b/mcp' }, null).type).toBe(
      'streamable_http',
    );
  });

  it('Scenario: lengths count code points', () => {
    expect(validateUserEntry({ display_name: '😀'.repeat(100), url: 'http://a.b' }, null).displayName).toHaveLength(200);
    expect(messageOf(() => validateUserEntry({ display_name: '😀'.repeat(101), url: 'http://a.b' }, null))).toBe(M.displayName);
  });
});
