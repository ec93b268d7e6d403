import { countMemoryEntries } from './memory-entries';

describe('countMemoryEntries', () => {
  it('Scenario: entries are the non-blank lines that are not headings, fences or rules', () => {
    expect(countMemoryEntries('# Facts\n\n- a\n- b\n---\n```\n[2026-07-26 10:00] c\n')).toBe(3);
    expect(countMemoryEntries('')).toBe(0);
  });
});
