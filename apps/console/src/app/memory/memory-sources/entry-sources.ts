import type { MemoryProvenanceRecord, UntrustedSource } from '@cashcode/contracts';

/**
 * Where each entry of MEMORY.md came from, from the provenance log: the latest write of that exact line (save_memory,
 * Dream, the console) and whether the owner marked it verified. A line without a record (edited by hand outside the
 * server) has an unknown source and is never shown as trusted.
 */
export type EntryTrust = 'unknown' | 'untrusted' | 'trusted' | 'verified';

export interface EntrySource {
  entry: string;
  trust: EntryTrust;
  /** the latest write of the line; absent: unknown source */
  record?: MemoryProvenanceRecord;
  untrusted: UntrustedSource[];
}

/** Non-blank lines of MEMORY.md, each with its source, in file order. */
export function entrySources(memory: string, records: readonly MemoryProvenanceRecord[]): EntrySource[] {
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
  const out: EntrySource[] = [];
  for (const raw of memory.split('\n')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const record = writes.get(entry);
    const untrusted = record?.untrusted_sources ?? [];
    let trust: EntryTrust;
    if (verified.has(entry)) trust = 'verified';
    else if (!record) trust = 'unknown';
    else trust = untrusted.length > 0 ? 'untrusted' : 'trusted';
    out.push({ entry, trust, untrusted, ...(record ? { record } : {}) });
  }
  return out;
}
