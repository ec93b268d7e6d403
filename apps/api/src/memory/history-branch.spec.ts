import { currentBranch } from './history-branch';
import { parseHistoryLine } from './history-record';
import { scanHistoryBackward, type ReadAt } from './history-scan';
import { toPublicMessages } from './sessions.service';
import type { HistoryRecord } from './memory.types';

function rec(cursor: number, role: HistoryRecord['role'], content: string, extra: Partial<HistoryRecord> = {}): HistoryRecord {
  return { cursor, timestamp: '2026-01-01 10:00', role, content, ...extra };
}

function readerOf(data: Buffer): ReadAt {
  return async (buffer, position) => data.copy(buffer, 0, position, Math.min(data.length, position + buffer.length));
}

describe('history branches', () => {
  const base = [
    rec(1, 'user', 'first'),
    rec(2, 'assistant', 'answer one'),
    rec(3, 'user', 'second'),
    rec(4, 'assistant', 'answer two'),
  ];

  it('Scenario: a history without replacements reads exactly as before', () => {
    expect(currentBranch(base)).toEqual(base);
    expect(toPublicMessages(base).map((m) => [m.role, m.content, m.cursor])).toEqual([
      ['user', 'first', 1],
      ['assistant', 'answer one', 2],
      ['user', 'second', 3],
      ['assistant', 'answer two', 4],
    ]);
  });

  it('Scenario: the projection shows only the current branch after a regenerate', () => {
    const records = [...base, rec(5, 'user', 'second', { supersedes: 3 }), rec(6, 'assistant', 'answer two, again')];
    expect(toPublicMessages(records).map((m) => [m.content, m.cursor])).toEqual([
      ['first', 1],
      ['answer one', 2],
      ['second', 5],
      ['answer two, again', 6],
    ]);
  });

  it('Scenario: an edited earlier message hides everything after it', () => {
    const records = [
      ...base,
      rec(5, 'user', 'first, edited', { supersedes: 1 }),
      rec(6, 'assistant', 'new answer'),
      // a later regenerate on the new branch
      rec(7, 'user', 'first, edited', { supersedes: 5 }),
      rec(8, 'assistant', 'newest answer'),
    ];
    expect(currentBranch(records).map((r) => r.cursor)).toEqual([7, 8]);
  });

  it('Scenario: a continued answer replaces the stopped one and keeps its tools', () => {
    const records = [
      rec(1, 'user', 'list files'),
      rec(2, 'tool_calls', '[TOOL_CALLS: list_dir]', { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] }),
      rec(3, 'tool', 'a.txt', { tool_call_id: 'c1', name: 'list_dir', ok: true, duration_ms: 3 }),
      rec(4, 'assistant', 'There is', { cancelled: true }),
      rec(5, 'assistant', 'There is one file.', { supersedes: 4 }),
    ];
    const messages = toPublicMessages(records);
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ role: 'assistant', content: 'There is one file.', cursor: 5 });
    expect(messages[1]!.cancelled).toBeUndefined();
    expect(messages[1]!.tools?.map((t) => t.name)).toEqual(['list_dir']);
  });

  it('Scenario: the model context is the current branch only', async () => {
    const lines = [...base, rec(5, 'user', 'second, edited', { supersedes: 3 }), rec(6, 'assistant', 'edited answer')]
      .map((r) => JSON.stringify(r))
      .join('\n');
    const data = Buffer.from(`${lines}\n`);
    const loaded = await scanHistoryBackward(readerOf(data), data.length);
    expect(loaded.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'answer one' },
      { role: 'user', content: 'second, edited' },
      { role: 'assistant', content: 'edited answer' },
    ]);
  });

  it('keeps only a valid supersedes (an earlier cursor) when parsing', () => {
    expect(parseHistoryLine('{"cursor":5,"role":"user","content":"x","supersedes":3}')?.supersedes).toBe(3);
    for (const bad of ['5', '6', '-1', '"3"', '1.5', 'null']) {
      const parsed = parseHistoryLine(`{"cursor":5,"role":"user","content":"x","supersedes":${bad}}`);
      expect(parsed).not.toBeNull();
      expect(parsed && 'supersedes' in parsed).toBe(false);
    }
  });
});
