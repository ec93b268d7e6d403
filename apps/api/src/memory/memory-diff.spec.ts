import fc from 'fast-check';
import { countMemoryEntries, unifiedDiff } from './memory-diff';

/** Applies a unified diff produced by unifiedDiff to `before` (test oracle). */
function applyDiff(before: string, diff: string): string[] {
  const source = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let position = 0;
  const lines = diff.replace(/\n$/, '').split('\n').slice(2);
  for (const line of lines) {
    const hunk = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (hunk) {
      const start = Number(hunk[2]) === 0 ? Number(hunk[1]) : Number(hunk[1]) - 1;
      while (position < start) out.push(source[position++]!);
      continue;
    }
    const kind = line[0];
    if (kind === ' ') {
      out.push(source[position++]!);
    } else if (kind === '-') {
      position++;
    } else if (kind === '+') {
      out.push(line.slice(1));
    }
  }
  while (position < source.length) out.push(source[position++]!);
  return out;
}

describe('unifiedDiff', () => {
  it('Scenario: identical texts have an empty diff', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n')).toBe('');
    expect(unifiedDiff('', '')).toBe('');
  });

  it('Scenario: an added entry shows as one hunk with context', () => {
    const before = '# Facts\n- a\n- b\n';
    const after = '# Facts\n- a\n- b\n- c\n';
    expect(unifiedDiff(before, after)).toBe(
      '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,3 +1,4 @@\n # Facts\n - a\n - b\n+- c\n',
    );
  });

  it('Scenario: a changed line is a removal followed by an addition; a new file is all additions', () => {
    expect(unifiedDiff('x\ny\n', 'x\nz\n')).toContain('@@ -1,2 +1,2 @@\n x\n-y\n+z\n');
    expect(unifiedDiff('', 'one\ntwo\n')).toBe('--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -0,0 +1,2 @@\n+one\n+two\n');
  });

  it('Scenario: applying the diff to the old text gives the new text (property)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'd', '# h', ''), { maxLength: 30 }).map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = unifiedDiff(before, after);
        const expected = after === '' ? [] : after.replace(/\n$/, '').split('\n');
        const beforeLines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
        if (diff === '') expect(beforeLines).toEqual(expected);
        else expect(applyDiff(before, diff)).toEqual(expected);
      }),
    );
  });
});

describe('countMemoryEntries', () => {
  it('Scenario: entries are the non-blank lines that are not headings, fences or rules', () => {
    expect(countMemoryEntries('# Facts\n\n- a\n- b\n---\n```\n[2026-07-26 10:00] c\n')).toBe(3);
    expect(countMemoryEntries('')).toBe(0);
  });
});
