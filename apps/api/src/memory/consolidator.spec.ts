import fc from 'fast-check';
import {
  CONSOLIDATION_SYSTEM_PROMPT,
  formatForSummary,
  historyEntries,
  planConsolidation,
  type HistoryEntry,
} from './consolidator';
import type { ChatMessage, HistoryRecord } from './memory.types';

function entry(message: ChatMessage, cursor: number | null): HistoryEntry {
  return { message, cursor, timestamp: '2026-07-26 12:00' };
}

const user = (content: string, cursor: number) => entry({ role: 'user', content }, cursor);
const assistant = (content: string, cursor: number) => entry({ role: 'assistant', content }, cursor);

describe('planConsolidation', () => {
  it('Scenario: a history below the threshold is not consolidated', () => {
    const plan = planConsolidation([user('hi', 1), assistant('x'.repeat(500), 2)], 1000);
    expect(plan).toEqual({ kind: 'below_threshold', size: 502 });
  });

  it('Scenario: the cut moves forward to the next user message', () => {
    const entries = [user('q1', 1), assistant('a'.repeat(600), 2), user('q2', 3), assistant('b'.repeat(600), 4)];
    // size 1204, target 602: from the end 600 (<602), +2 = 602 → index 2 is already a user message
    expect(planConsolidation(entries, 1000)).toEqual({ kind: 'compress', size: 1204, keepIndex: 2, keepFromCursor: 3 });
    const longer = [user('q1', 1), assistant('a'.repeat(600), 2), user('q2', 3), assistant('b'.repeat(590), 4)];
    // target 597: 590, +2 = 592, +600 → index 1 (assistant) → moved forward to index 2
    expect(planConsolidation(longer, 1000)).toMatchObject({ kind: 'compress', keepIndex: 2, keepFromCursor: 3 });
  });

  it('Scenario: the cut never separates a tool-call message from its tool results', () => {
    const entries: HistoryEntry[] = [
      user('q1', 1),
      entry({ role: 'assistant', content: '[TOOL_CALLS: read_file]', tool_calls: [] }, 2),
      entry({ role: 'tool', content: 'r'.repeat(800), tool_call_id: 'c1', name: 'read_file' }, 3),
      assistant('a1', 4),
      user('q2', 5),
      entry({ role: 'assistant', content: '[TOOL_CALLS: grep]', tool_calls: [] }, 6),
      entry({ role: 'tool', content: 't'.repeat(800), tool_call_id: 'c2', name: 'grep' }, 7),
      assistant('a2', 8),
    ];
    const plan = planConsolidation(entries, 1000);
    expect(plan).toMatchObject({ kind: 'compress', keepIndex: 4, keepFromCursor: 5 });
  });

  it('Scenario: without a later user message the cut falls back to the last user message', () => {
    const entries = [user('q1', 1), assistant('a'.repeat(300), 2), user('q2', 3), assistant('b'.repeat(900), 4)];
    // target 602: the last message alone reaches it → index 3, no user after it → the last user message (index 2)
    expect(planConsolidation(entries, 1000)).toMatchObject({ kind: 'compress', keepIndex: 2, keepFromCursor: 3 });
  });

  it('Scenario: one huge turn leaves nothing to compress', () => {
    expect(planConsolidation([user('q1', 1), assistant('a'.repeat(2000), 2)], 1000)).toEqual({
      kind: 'nothing_to_compress',
      size: 2002,
    });
    // only the previous summary before the boundary: summarising would only rewrite the summary
    const summary = entry({ role: 'assistant', content: '[History summary] s'.repeat(30) }, null);
    expect(planConsolidation([summary, user('q', 5), assistant('a'.repeat(2000), 6)], 1000).kind).toBe('nothing_to_compress');
  });

  it('Scenario: the previous summary is part of what is compressed (cumulative)', () => {
    const summary = entry({ role: 'assistant', content: '[History summary] earlier facts' }, null);
    const entries = [summary, user('q1', 7), assistant('a'.repeat(600), 8), user('q2', 9), assistant('b'.repeat(600), 10)];
    const plan = planConsolidation(entries, 1000);
    expect(plan).toMatchObject({ kind: 'compress', keepIndex: 3, keepFromCursor: 9 });
    expect(formatForSummary(entries.slice(0, 3))).toContain('ASSISTANT: [History summary] earlier facts');
  });

  it('Scenario: the kept part always starts with a user message and the compressed part holds records (property)', () => {
    const message = fc.oneof(
      fc.record({ role: fc.constant('user' as const), content: fc.string({ maxLength: 400 }) }),
      fc.record({ role: fc.constant('assistant' as const), content: fc.string({ maxLength: 400 }) }),
      fc.record({
        role: fc.constant('tool' as const),
        content: fc.string({ maxLength: 400 }),
        tool_call_id: fc.constant('c'),
        name: fc.constant('t'),
      }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), fc.integer({ min: 1, max: 3000 }), (messages, threshold) => {
        const entries = messages.map((m, index) => entry(m as ChatMessage, index + 1));
        const plan = planConsolidation(entries, threshold);
        if (plan.kind !== 'compress') return;
        expect(entries[plan.keepIndex]!.message.role).toBe('user');
        expect(plan.keepIndex).toBeGreaterThan(0);
        expect(plan.keepFromCursor).toBe(entries[plan.keepIndex]!.cursor);
        expect(plan.size).toBeGreaterThanOrEqual(threshold);
      }),
    );
  });
});

describe('summariser input', () => {
  it('Scenario: the summariser prompt is English and asks for a cumulative third-person summary', () => {
    expect(CONSOLIDATION_SYSTEM_PROMPT).toContain('conversation summariser');
    expect(CONSOLIDATION_SYSTEM_PROMPT).toContain('[History summary]');
    expect(CONSOLIDATION_SYSTEM_PROMPT).toContain('third person');
  });

  it('Scenario: messages become timestamped lines; tool results are cut to 200 characters', () => {
    const records: HistoryRecord[] = [
      { cursor: 1, timestamp: '2026-07-26 10:00', role: 'user', content: 'list the files' },
      {
        cursor: 2,
        timestamp: '2026-07-26 10:00',
        role: 'tool_calls',
        content: '[TOOL_CALLS: list_dir]',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }],
      },
      { cursor: 3, timestamp: '2026-07-26 10:01', role: 'tool', content: 'f'.repeat(300), tool_call_id: 'c1', name: 'list_dir' },
      { cursor: 4, timestamp: '2026-07-26 10:01', role: 'assistant', content: '' },
      { cursor: 5, timestamp: '2026-07-26 10:02', role: 'assistant', content: 'Two files.' },
    ];
    const summary: HistoryRecord = { cursor: 0, timestamp: '2026-07-25 09:00', role: 'summary', content: 'Earlier: greetings.' };
    const text = formatForSummary(historyEntries(summary, records));
    expect(text.split('\n')).toEqual([
      '[2026-07-25 09:00] ASSISTANT: [History summary] Earlier: greetings.',
      '[2026-07-26 10:00] USER: list the files',
      '[2026-07-26 10:00] ASSISTANT: [TOOL_CALLS: list_dir]',
      `[2026-07-26 10:01] TOOL_RESULT: ${'f'.repeat(200)} …[truncated]`,
      '[2026-07-26 10:02] ASSISTANT: Two files.',
    ]);
  });
});
