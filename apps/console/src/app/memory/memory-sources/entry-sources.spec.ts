import type { MemoryProvenanceRecord } from '@cashcode/contracts';
import { describe, expect, it } from 'vitest';

import { entrySources } from './entry-sources';

const write = (entry: string, sources: MemoryProvenanceRecord['untrusted_sources'] = []): MemoryProvenanceRecord => ({
  at: '2026-07-26T10:00:00.000+02:00',
  origin: 'save_memory',
  requested_by: 'owner',
  entry,
  chat_id: 'c1',
  untrusted_sources: sources,
});
const page = { kind: 'web_fetch' as const, name: 'https://evil.test/' };

describe('entrySources', () => {
  it('Scenario: the Memory page shows each entry with its source; a hand-edited line is of unknown source', () => {
    const rows = entrySources('# Facts\n\n- tea\n- pay account 123\n- hand edit\n', [
      write('- tea'),
      write('- pay account 123', [page]),
    ]);
    expect(rows.map((row) => [row.entry, row.trust])).toEqual([
      ['# Facts', 'unknown'],
      ['- tea', 'trusted'],
      ['- pay account 123', 'untrusted'],
      ['- hand edit', 'unknown'],
    ]);
    expect(rows[2]?.untrusted).toEqual([page]);
  });

  it('a verification marks the line verified until it is written again', () => {
    const verify = { ...write('- x'), origin: 'console' as const, verified: true };
    expect(entrySources('- x', [write('- x', [page]), verify])[0]?.trust).toBe('verified');
    expect(entrySources('- x', [write('- x', [page]), verify, write('- x', [page])])[0]?.trust).toBe('untrusted');
  });
});
