/** Pure view helpers of the Evolution view (no Angular): ordering and diff rendering. */
import type { SkillEvolutionProposal, SkillEvolutionStatus } from '@cashcode/contracts';

const STATUS_ORDER: Record<SkillEvolutionStatus, number> = { pending: 0, applied: 1, rejected: 2 };

/** Pending proposals first, then applied, then rejected; newest first within each group. */
export function sortProposals(items: readonly SkillEvolutionProposal[]): SkillEvolutionProposal[] {
  return [...items].sort(
    (a, b) =>
      STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
      b.created_at.localeCompare(a.created_at) ||
      b.id.localeCompare(a.id),
  );
}

export type DiffLineKind = 'meta' | 'hunk' | 'add' | 'remove' | 'context';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** The lines of a unified diff, classified for colouring. */
export function diffLines(diff: string): DiffLine[] {
  const lines = diff.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((text): DiffLine => {
    if (text.startsWith('+++') || text.startsWith('---')) return { kind: 'meta', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'remove', text };
    return { kind: 'context', text };
  });
}
