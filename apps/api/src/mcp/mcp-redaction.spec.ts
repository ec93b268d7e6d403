import type { McpServerConfig } from './mcp.types';
import { describeError, redactionContext, redactMcpError } from './mcp-redaction';

const server: McpServerConfig = {
  name: 's',
  displayName: 'S',
  description: '',
  type: 'sse',
  builtin: true,
  command: '',
  args: [],
  env: { API_TOKEN: 'env-token-value', PLAIN: 'visible-value' },
  cwd: '/repo',
  url: 'http://a.b/sse',
  headers: { 'X-Key': 'header-secret-value' },
};
const context = redactionContext('/repo/root', '/srv/data');

describe('MCP error redaction', () => {
  it('Scenario: header values and secret env values are replaced, on one line, ≤ 500 chars', () => {
    const error = new TypeError('failed with header-secret-value\r\nand env-token-value but visible-value');
    const text = redactMcpError(error, server, context);
    expect(text).toBe('TypeError: failed with [redacted] and [redacted] but visible-value');
    // every env value of a user entry is a secret
    expect(redactMcpError(error, { ...server, builtin: false }, context)).toBe(
      'TypeError: failed with [redacted] and [redacted] but [redacted]',
    );
    expect(redactMcpError(new Error('x'.repeat(900)), server, context)).toHaveLength(500);
  });

  it('Scenario: host paths of the server are replaced', () => {
    expect(redactMcpError(new Error('spawn /repo/root/bin/x ENOENT in /srv/data/mcp'), server, context)).toBe(
      'Error: spawn <root>/bin/x ENOENT in <data>/mcp',
    );
  });

  it('Scenario: a fetch failure names its cause code', () => {
    const error = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(describeError(error)).toBe('TypeError: fetch failed (ECONNREFUSED)');
  });
});
