/**
 * Branches of an append-only history (openspec sessions "Requirement: Regenerate, edit and continue"). Regenerate, edit
 * and continue never rewrite history.jsonl: the first record they append carries `supersedes: <cursor>`, meaning "this
 * record replaces the records from that cursor up to itself". The current branch is what remains when every such
 * record hides the records it replaces; superseded records stay on disk. A history without `supersedes` (every file
 * written before this feature, or by the original server) is its own current branch.
 */
import type { HistoryRecord } from './memory.types';

/** The records of the current branch, in file order (a new array; the input is not changed). */
export function currentBranch<T extends Pick<HistoryRecord, 'cursor' | 'supersedes'>>(records: readonly T[]): T[] {
  const branch: T[] = [];
  for (const record of records) {
    const from = record.supersedes;
    if (typeof from === 'number') {
      while (branch.length > 0 && branch[branch.length - 1]!.cursor >= from) branch.pop();
    }
    branch.push(record);
  }
  return branch;
}

/** Whether any record of the list replaces earlier ones (a history that needs the branch filter). */
export function hasBranches(records: readonly Pick<HistoryRecord, 'supersedes'>[]): boolean {
  return records.some((record) => typeof record.supersedes === 'number');
}
