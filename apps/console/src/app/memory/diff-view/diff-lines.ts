/** A unified diff (as the API records it for each Dream run) split into typed lines for display. */
export type DiffLineKind = 'add' | 'remove' | 'context' | 'hunk' | 'file';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

export function parseUnifiedDiff(diff: string): DiffLine[] {
  if (diff === '') return [];
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  return lines.map((line): DiffLine => {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) return { kind: 'file', text: line };
    if (line.startsWith('@@')) return { kind: 'hunk', text: line };
    if (line.startsWith('+')) return { kind: 'add', text: line.slice(1) };
    if (line.startsWith('-')) return { kind: 'remove', text: line.slice(1) };
    return { kind: 'context', text: line.startsWith(' ') ? line.slice(1) : line };
  });
}
