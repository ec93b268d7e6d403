/**
 * Entries of a MEMORY.md for the Dream loss guard: non-blank lines that are not Markdown headings, code fences or
 * horizontal rules (each fact is normally one bullet or one dated line).
 */
export function countMemoryEntries(text: string): number {
  let count = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('```') || /^([-*_])\1{2,}$/.test(line)) continue;
    count++;
  }
  return count;
}
