/**
 * Line diffs of two texts (pure, no I/O): a unified diff (`--- <before>` / `+++ <after>`, `@@` hunks with 3 lines of
 * context) computed with a longest-common-subsequence table after trimming the common prefix and suffix. Very large
 * changes (over DIFF_MAX_CELLS table cells) fall back to "remove all, add all" in one hunk. Used for MEMORY.md (Dream
 * history) and SKILL.md (Skill evolution proposals).
 */

const CONTEXT_LINES = 3;
const DIFF_MAX_CELLS = 4_000_000;

type Op = { kind: ' ' | '-' | '+'; text: string };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The edit script turning `a` into `b` (common lines kept, removals before additions within a change). */
function editScript(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = a.slice(0, start).map((text) => ({ kind: ' ', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  if (n * m > DIFF_MAX_CELLS) {
    ops.push(...midA.map((text): Op => ({ kind: '-', text })), ...midB.map((text): Op => ({ kind: '+', text })));
  } else {
    // lcs[i][j] = LCS length of midA[i..] and midB[j..], stored row-major in one typed array
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          midA[i] === midB[j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    const removed: Op[] = [];
    const added: Op[] = [];
    const flush = () => {
      ops.push(...removed.splice(0), ...added.splice(0));
    };
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        flush();
        ops.push({ kind: ' ', text: midA[i]! });
        i++;
        j++;
      } else if (j < m && (i >= n || lcs[i * width + j + 1]! >= lcs[(i + 1) * width + j]!)) {
        added.push({ kind: '+', text: midB[j]! });
        j++;
      } else {
        removed.push({ kind: '-', text: midA[i]! });
        i++;
      }
    }
    flush();
  }
  ops.push(...a.slice(endA).map((text): Op => ({ kind: ' ', text })));
  return ops;
}

/** The names a diff gives the two texts in its `---` / `+++` header lines. */
export interface DiffLabels {
  before: string;
  after: string;
}

/** A unified diff of two texts; '' when they have the same lines. */
export function unifiedDiff(before: string, after: string, labels: DiffLabels): string {
  const ops = editScript(splitLines(before), splitLines(after));
  if (!ops.some((op) => op.kind !== ' ')) return '';
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  let index = 0;
  while (index < ops.length) {
    while (index < ops.length && ops[index]!.kind === ' ') index++;
    if (index >= ops.length) break;
    // a hunk: context before, changes, and context after; changes closer than 2×context merge into one hunk
    const start = Math.max(0, index - CONTEXT_LINES);
    let end = index;
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let gap = end;
      while (gap < ops.length && ops[gap]!.kind === ' ') gap++;
      if (gap < ops.length && gap - end <= 2 * CONTEXT_LINES) {
        end = gap;
        continue;
      }
      end = Math.min(ops.length, end + CONTEXT_LINES);
      break;
    }
    let lineA = 1;
    let lineB = 1;
    for (let k = 0; k < start; k++) {
      if (ops[k]!.kind !== '+') lineA++;
      if (ops[k]!.kind !== '-') lineB++;
    }
    const hunk = ops.slice(start, end);
    const countA = hunk.filter((op) => op.kind !== '+').length;
    const countB = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${countA === 0 ? lineA - 1 : lineA},${countA} +${countB === 0 ? lineB - 1 : lineB},${countB} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.text}`);
    index = end;
  }
  return `${out.join('\n')}\n`;
}
