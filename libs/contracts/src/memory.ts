/**
 * Long-term memory REST shapes (`/api/memory*`, a CashCode addition; openspec memory "Requirement: Memory REST API"):
 * MEMORY.md and SOUL.md with a content hash for optimistic concurrency, and the Dream run history with diffs, revert
 * and "run now".
 */
import type { LlmSelection } from './llm-provider';

/** `GET /api/memory` and the answer of `PUT /api/memory`. */
export interface MemoryDocumentResponse {
  /** the file's raw text ('' when it does not exist) */
  content: string;
  /** sha256 of `content` (UTF-8), lowercase hex: send it back with PUT */
  hash: string;
}

/** `GET /api/memory/soul` and the answer of `PUT /api/memory/soul`. */
export interface SoulDocumentResponse extends MemoryDocumentResponse {
  /** true when SOUL.md is missing or blank, so the built-in persona is used */
  uses_default: boolean;
  /** the built-in persona */
  default_content: string;
}

/** `PUT /api/memory` and `PUT /api/memory/soul`. */
export interface UpdateMemoryDocumentRequest {
  content: string;
  /** the hash this edit is based on (from the last GET/PUT); 409 when the file changed since */
  hash: string;
}

export type DreamTrigger = 'schedule' | 'manual' | 'revert' | 'apply';
// `apply` (additive): the owner applied the proposal of a `held` run

/**
 * - `updated`: MEMORY.md was rewritten (a snapshot of the previous text was kept)
 * - `unchanged`: the model proposed no change (or an empty file); nothing written
 * - `rejected`: the rewrite would have dropped more than half of the entries; nothing written
 * - `failed`: a model call failed or timed out, or MEMORY.md changed during the run; nothing written, cursor kept
 * - `reverted`: MEMORY.md was restored from the snapshot of an earlier run
 */
export type DreamOutcome = 'updated' | 'unchanged' | 'rejected' | 'failed' | 'reverted' | 'held';
// `held` (additive): the rewrite would drop or change entries the owner verified; nothing written, the proposal is
// kept for the owner's review (`POST /api/memory/dreams/{id}/apply` writes it)

export interface DreamRun {
  /** `<epoch ms>-<8 hex>` */
  id: string;
  trigger: DreamTrigger;
  /** ISO 8601 */
  started_at: string;
  finished_at: string;
  outcome: DreamOutcome;
  /** why a run failed or was rejected, or what it reverted; null otherwise */
  detail: string | null;
  /** the model used, and where the choice came from */
  model: LlmSelection | null;
  model_source: 'background' | 'last_turn' | null;
  /** history records given to the model */
  records_read: number;
  /** chats whose Dream cursor advanced, with the new cursor */
  cursors: Record<string, number>;
  /** non-blank, non-heading lines of MEMORY.md before and after (proposed, for a rejected run) */
  entries_before: number;
  entries_after: number;
  /** unified diff of MEMORY.md (the proposed change for a rejected run); '' when there is none */
  diff: string;
  /** a snapshot of MEMORY.md from before this run exists: it can be reverted */
  revertible: boolean;
  /** for a `revert` run: the run whose snapshot was restored */
  reverted_run_id?: string;
  /**
   * additive: where the entries the diff adds or removes came from (the provenance log), and the unverified entries
   * from untrusted context Dream kept out of its rewrite (`change: kept_unpromoted`)
   */
  provenance?: DreamEntryProvenance[];
  /** additive, for a `held` run: the verified entries the proposal would drop or change */
  verified_dropped?: string[];
  /** additive, for an `apply` run: the held run whose proposal was written */
  applied_run_id?: string;
}

/**
 * - `verified`: the owner's latest mark
 * - `untrusted`: written while untrusted content was in the model's context, not verified
 * - `trusted`: written without untrusted content in context
 * - `unknown`: no provenance record (a line edited outside the server): never treated as trusted
 */
export type MemoryEntryTrust = 'unknown' | 'untrusted' | 'trusted' | 'verified';

/** One entry of a Dream diff with its source. */
export interface DreamEntryProvenance {
  entry: string;
  change: 'added' | 'removed' | 'kept_unpromoted';
  trust: MemoryEntryTrust;
  untrusted_sources: UntrustedSource[];
}

export interface DreamRunListResponse {
  /** newest first */
  runs: DreamRun[];
}

/** `POST /api/memory/dream`: `ran: false` when there was nothing to do (no new records, or no model to use). */
export interface DreamTriggerResponse {
  ran: boolean;
  reason: 'no_new_records' | 'no_model' | null;
  run: DreamRun | null;
}

// ---- provenance (`GET /api/memory/provenance`; openspec memory "Requirement: Memory provenance") -------------------

/**
 * Content the model read that nobody vouches for: a fetched page, search results, an MCP tool's or resource's text, a
 * Skill's resource file, a file attached to a message, a message of someone other than the owner (a channel).
 * `name` says which (the URL, the query, `<server>/<tool>`, `<skill>/<path>`, the workspace path, the sender).
 */
export type UntrustedSourceKind =
  | 'web_fetch'
  | 'web_search'
  | 'mcp_tool'
  | 'mcp_resource'
  | 'skill_resource'
  | 'attachment'
  | 'channel_message'
  | 'browser'
  /** additive: the answer of a sub-agent that could read untrusted content (named by its task) */
  | 'subagent';
export const UNTRUSTED_SOURCE_KINDS: readonly UntrustedSourceKind[] = [
  'web_fetch',
  'web_search',
  'mcp_tool',
  'mcp_resource',
  'skill_resource',
  'attachment',
  'channel_message',
  'browser',
  'subagent',
];

export interface UntrustedSource {
  kind: UntrustedSourceKind;
  name: string;
}

/** What wrote an entry into MEMORY.md: the agent's `save_memory`, a Dream run, or an edit in the console (REST). */
export type MemoryWriteOrigin = 'save_memory' | 'dream' | 'console';

/** Who asked for the write: the owner (a chat or the console), a headless API client, or the server itself (Dream). */
export type MemoryRequester = 'owner' | 'api' | 'server';

/** One line of the provenance log (`<memory>/MEMORY.provenance.jsonl`, append-only, 0600). */
export interface MemoryProvenanceRecord {
  /** ISO 8601 with offset */
  at: string;
  origin: MemoryWriteOrigin;
  requested_by: MemoryRequester;
  /** the entry's text as it was added to MEMORY.md (one line) */
  entry: string;
  chat_id?: string;
  turn_id?: string;
  /** the Dream run that wrote it */
  dream_run_id?: string;
  /** the untrusted content in the model's context when the entry was written; empty: none */
  untrusted_sources: UntrustedSource[];
  /** additive: a write the owner approved (a `memory_write` approval) */
  approved?: boolean;
  /**
   * additive: not a write but the owner's mark that `entry` is verified (`origin: console`, `requested_by: owner`):
   * an entry whose latest record is this mark counts as verified whatever its sources
   */
  verified?: boolean;
}

/** `POST /api/memory/provenance/verify`: the owner marks a line of MEMORY.md as verified. */
export interface VerifyMemoryEntryRequest {
  /** the line exactly as MEMORY.md has it (surrounding blanks ignored) */
  entry: string;
}

/** `GET /api/memory/provenance?offset&limit`: the records, oldest first. */
export interface MemoryProvenanceResponse {
  records: MemoryProvenanceRecord[];
  total: number;
  offset: number;
  limit: number;
  /** lines of the log that could not be read (skipped, logged) */
  unreadable: number;
}
