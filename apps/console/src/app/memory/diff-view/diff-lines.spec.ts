import { parseUnifiedDiff } from './diff-lines';

describe('parseUnifiedDiff', () => {
  it('Scenario: a recorded Dream diff is split into typed lines', () => {
    const diff = '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,2 +1,2 @@\n # Facts\n-- old\n+- new\n';
    expect(parseUnifiedDiff(diff)).toEqual([
      { kind: 'file', text: '--- MEMORY.md (before)' },
      { kind: 'file', text: '+++ MEMORY.md (after)' },
      { kind: 'hunk', text: '@@ -1,2 +1,2 @@' },
      { kind: 'context', text: '# Facts' },
      { kind: 'remove', text: '- old' },
      { kind: 'add', text: '- new' },
    ]);
  });

  it('Scenario: an empty diff has no lines', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
  });
});
