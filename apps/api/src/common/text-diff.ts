/**
 * Line diffs of two texts (pure, no I/O), for MEMORY.md (Dream history) and SKILL.md (Skill evolution proposals): a
 * unified diff (`--- <before>` / `+++ <after>`, `@@` hunks with 3 lines of context), computed by the `diff` package
 * (jsdiff's Myers diff). This module only fixes the output to what the Dream and Skills views show: no `Index:` /
 * `===` lines, '' when the texts have the same lines, and a missing final newline is not a change (both texts are
 * compared as lines, so there are no `\ No newline at end of file` markers). It replaced a hand-written LCS table:
 * diffs are made only by Dream runs and Skill proposals, never on a turn's path, so there was nothing to save per turn.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

const CONTEXT_LINES = 3;

/** The names a diff gives the two texts in its `---` / `+++` header lines. */
export interface DiffLabels {
  before: string;
  after: string;
}

/** The text as complete lines: '' stays '', anything else ends with a newline. */
function asLines(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** A unified diff of two texts; '' when they have the same lines. */
export function unifiedDiff(before: string, after: string, labels: DiffLabels): string {
  const patch = structuredPatch(labels.before, labels.after, asLines(before), asLines(after), undefined, undefined, {
    context: CONTEXT_LINES,
  });
  if (patch.hunks.length === 0) return '';
  return formatPatch(patch, FILE_HEADERS_ONLY);
}
