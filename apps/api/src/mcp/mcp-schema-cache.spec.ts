import { createHash } from 'node:crypto';
import type { McpServerConfig } from './mcp.types';
import { safeCacheName, transportFingerprint } from './mcp-schema-cache';

const base: McpServerConfig = {
  name: 's',
  displayName: 'S',
  description: '',
  type: 'stdio',
  builtin: true,
  command: 'node',
  args: ['/r/server.js', '--x'],
  env: { B: '2', A: '1' },
  cwd: '/r',
  url: '',
  headers: { Authorization: 'secret' },
};

describe('MCP schema cache', () => {
  it('Scenario: the fingerprint is the first 16 hex of SHA-256 over compact key-sorted transport JSON', () => {
    const canonical = '{"args":["/r/server.js","--x"],"command":"node","env":{"A":"1","B":"2"},"url":""}';
    expect(transportFingerprint(base)).toBe(createHash('sha256').update(canonical).digest('hex').slice(0, 16));
  });

  it('Scenario: headers are not part of the fingerprint; the transport is', () => {
    expect(transportFingerprint({ ...base, headers: {} })).toBe(transportFingerprint(base));
    expect(transportFingerprint({ ...base, args: ['/r/other.js'] })).not.toBe(transportFingerprint(base));
  });

  it('Scenario: safe cache names replace other characters with _', () => {
    expect(safeCacheName('a.b/c d-e_f')).toBe('a_b_c_d-e_f');
  });
});
