// Memory trust: the entries of MEMORY.md with the trust their provenance gives them, and the owner's per-source relax
// policy for the `memory_write` asks (openspec memory "Requirement: Memory provenance", "Requirement: Trusted sources").
import type { MemoryEntryTrust, MemoryProvenanceRecord, UntrustedSource } from './memory';

/** One non-blank line of MEMORY.md with its source. */
export interface MemoryEntryView {
  /** 1-based line number in MEMORY.md */
  line: number;
  entry: string;
  trust: MemoryEntryTrust;
  untrusted_sources: UntrustedSource[];
  /** the latest write of the line; absent: unknown source */
  record?: MemoryProvenanceRecord;
}

/** `GET /api/memory/entries?offset&limit`: MEMORY.md's entries in file order, a page at a time. */
export interface MemoryEntriesResponse {
  entries: MemoryEntryView[];
  total: number;
  offset: number;
  limit: number;
  /** counts over all entries */
  counts: Record<MemoryEntryTrust, number>;
  /** lines of the provenance log that could not be read */
  unreadable: number;
}

/**
 * A source the owner trusts, so content from it no longer makes a memory, Skill or automation write ask:
 * - `mcp_server`: every tool and resource of the owner's MCP server `name`
 * - `domain`: pages fetched from `name` or its subdomains (web_fetch)
 * - `skill`: the resource files of the Skill `name`
 */
export type TrustedSourceKind = 'mcp_server' | 'domain' | 'skill';
export const TRUSTED_SOURCE_KINDS: readonly TrustedSourceKind[] = ['mcp_server', 'domain', 'skill'];

export interface TrustedSource {
  kind: TrustedSourceKind;
  name: string;
}

/** `GET/PUT /api/settings/trusted-sources` (PUT replaces the list). */
export interface TrustedSourcesResponse {
  sources: TrustedSource[];
}
export interface UpdateTrustedSourcesRequest {
  sources: TrustedSource[];
}

/** In the approvals audit (`tool: trusted_sources`): the owner trusted or stopped trusting a source. */
export interface TrustedSourceAuditRecord {
  action: 'trust' | 'untrust';
  kind: TrustedSourceKind;
  name: string;
}
