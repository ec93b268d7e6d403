/**
 * The trust of each entry of MEMORY.md from the provenance log (openspec memory "Requirement: Memory provenance"): the
 * latest write of that exact line (save_memory, Dream, the console) and whether the owner marked it verified since.
 * A line without any record — edited by hand outside the server, or written before the log existed — has an unknown
 * source and is never treated as trusted. Pure; shared by the entries listing and Dream.
 */
import type { MemoryEntryTrust, MemoryEntryView, MemoryProvenanceRecord } from '@cashcode/contracts';

/** The latest write and the verification state of each line the log knows. */
export interface EntryIndex {
  writes: Map<string, MemoryProvenanceRecord>;
  verified: Set<string>;
}

export function indexProvenance(records: readonly MemoryProvenanceRecord[]): EntryIndex {
  const writes = new Map<string, MemoryProvenanceRecord>();
  const verified = new Set<string>();
  for (const record of records) {
    if (record.verified === true) verified.add(record.entry);
    else {
      writes.set(record.entry, record);
      // a new write of the line after a verification is judged again
      verified.delete(record.entry);
    }
  }
  return { writes, verified };
}

/** One line's trust and source. */
export function entryView(entry: string, line: number, index: EntryIndex): MemoryEntryView {
  const record = index.writes.get(entry);
  const untrusted = record?.untrusted_sources ?? [];
  let trust: MemoryEntryTrust;
  if (index.verified.has(entry)) trust = 'verified';
  else if (!record) trust = 'unknown';
  else trust = untrusted.length > 0 ? 'untrusted' : 'trusted';
  return { line, entry, trust, untrusted_sources: untrusted.map((source) => ({ ...source })), ...(record ? { record } : {}) };
}

/** The non-blank lines of MEMORY.md (trimmed), each with its trust, in file order. */
export function memoryEntryViews(memory: string, records: readonly MemoryProvenanceRecord[]): MemoryEntryView[] {
  const index = indexProvenance(records);
  const out: MemoryEntryView[] = [];
  for (const [position, raw] of memory.split('\n').entries()) {
    const entry = raw.trim();
    if (entry !== '') out.push(entryView(entry, position + 1, index));
  }
  return out;
}

/** Whether Dream must keep the entry out of its rewrite: written from untrusted content and not verified by the owner. */
export function isUnverifiedUntrusted(view: MemoryEntryView): boolean {
  return view.trust === 'untrusted';
}
