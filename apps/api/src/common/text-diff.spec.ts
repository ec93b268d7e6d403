import fc from 'fast-check';
import { unifiedDiff } from './text-diff';

const LABELS = { before: 'MEMORY.md (before)', after: 'MEMORY.md (after)' };

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
    expect(unifiedDiff('a\nb\n', 'a\nb\n', LABELS)).toBe('');
    expect(unifiedDiff('', '', LABELS)).toBe('');
  });

  it('Scenario: an added entry shows as one hunk with context', () => {
    const before = '# Facts\n- a\n- b\n';
    const after = '# Facts\n- a\n- b\n- c\n';
    expect(unifiedDiff(before, after, LABELS)).toBe(
      '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,3 +1,4 @@\n # Facts\n - a\n - b\n+- c\n',
    );
  });

  it('Scenario: a changed line is a removal followed by an addition; a new file is all additions', () => {
    expect(unifiedDiff('x\ny\n', 'x\nz\n', LABELS)).toContain('@@ -1,2 +1,2 @@\n x\n-y\n+z\n');
    expect(unifiedDiff('', 'one\ntwo\n', LABELS)).toBe('--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -0,0 +1,2 @@\n+one\n+two\n');
  });

  it('Scenario: a missing final newline is not a change and shows no marker', () => {
    expect(unifiedDiff('a\nb', 'a\nb\n', LABELS)).toBe('');
    expect(unifiedDiff('a\nb', 'a\nc', LABELS)).toBe('--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
  });

  it('Scenario: changes far apart are separate hunks, each with 3 lines of context', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const changed = lines.map((line, i) => (i === 1 || i === 17 ? `${line} changed` : line));
    expect(unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, LABELS)).toBe(
      [
        '--- MEMORY.md (before)',
        '+++ MEMORY.md (after)',
        '@@ -1,5 +1,5 @@',
        ' line 1',
        '-line 2',
        '+line 2 changed',
        ' line 3',
        ' line 4',
        ' line 5',
        '@@ -15,6 +15,6 @@',
        ' line 15',
        ' line 16',
        ' line 17',
        '-line 18',
        '+line 18 changed',
        ' line 19',
        ' line 20',
        '',
      ].join('\n'),
    );
  });

  it('Scenario: the header lines name the two texts', () => {
    expect(unifiedDiff('same\nold\n', 'same\nnew\n', { before: 'SKILL.md (current)', after: 'SKILL.md (proposed)' })).toBe(
      '--- SKILL.md (current)\n+++ SKILL.md (proposed)\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n',
    );
  });

  it('Scenario: applying the diff to the old text gives the new text (property)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'd', '# h', ''), { maxLength: 30 }).map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = unifiedDiff(before, after, LABELS);
        const expected = after === '' ? [] : after.replace(/\n$/, '').split('\n');
        const beforeLines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
        if (diff === '') expect(beforeLines).toEqual(expected);
        else expect(applyDiff(before, diff)).toEqual(expected);
      }),
    );
  });
});
