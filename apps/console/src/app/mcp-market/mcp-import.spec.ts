import { describe, expect, it } from 'vitest';
import { importSummary, parseImportText } from './mcp-import';

describe('MCP import', () => {
  it('parses a pasted object and refuses anything else', () => {
    expect(parseImportText('{"mcpServers": {}}')).toEqual({ mcpServers: {} });
    expect(parseImportText('[1]')).toBeNull();
    expect(parseImportText('{ nope')).toBeNull();
  });

  it('summarises created and skipped servers', () => {
    const t = (key: string, params?: Record<string, string>) => `${key}${params ? JSON.stringify(params) : ''}`;
    const lines = importSummary(
      { created: [{ name: 'memory' } as never], skipped: [{ name: 'x', reason: 'conflict', detail: 'exists' }] },
      t,
    );
    expect(lines).toEqual(['mcp.import.created{"names":"memory"}', 'mcp.import.skipped{"name":"x","detail":"exists"}']);
  });
});
