import { DomainError } from '../common/domain-error';

export type MemoryErrorCode =
  | 'invalid_chat_id'
  | 'session_not_found'
  /** PUT /api/memory with a hash that no longer matches MEMORY.md */
  | 'memory_conflict'
  /** PUT /api/memory/soul with a hash that no longer matches SOUL.md */
  | 'soul_conflict'
  /** POST /api/memory/dream while a Dream run is in progress */
  | 'dream_running'
  | 'dream_run_not_found'
  /** revert of a run that did not write MEMORY.md */
  | 'dream_run_not_revertible'
  /** revert of a run whose snapshot was pruned */
  | 'dream_snapshot_missing'
  /** apply of a run that holds no proposal for review */
  | 'dream_run_not_held'
  /** apply of a held proposal after MEMORY.md changed since the run */
  | 'dream_proposal_stale'
  /** POST /api/memory/provenance/verify of a line MEMORY.md does not have */
  | 'memory_entry_not_found';

const DETAILS: Record<MemoryErrorCode, { status: number; detail: string }> = {
  invalid_chat_id: { status: 400, detail: 'invalid chat_id' },
  session_not_found: { status: 404, detail: 'session not found' },
  memory_conflict: { status: 409, detail: 'MEMORY.md was changed since it was read; reload it and apply your edit again' },
  soul_conflict: { status: 409, detail: 'SOUL.md was changed since it was read; reload it and apply your edit again' },
  dream_running: { status: 409, detail: 'a Dream run is already in progress' },
  dream_run_not_found: { status: 404, detail: 'Dream run not found' },
  dream_run_not_revertible: { status: 409, detail: 'this run did not change MEMORY.md, so there is nothing to revert' },
  dream_snapshot_missing: { status: 409, detail: 'the snapshot taken before this run is no longer available' },
  dream_run_not_held: { status: 409, detail: 'this run holds no proposal for review' },
  dream_proposal_stale: {
    status: 409,
    detail: 'MEMORY.md changed since this run; its proposal was made for an older text. Run Dream again',
  },
  memory_entry_not_found: { status: 404, detail: 'MEMORY.md has no such entry (it may have been edited or removed); reload it' },
};

/**
 * Coded domain error of the memory module, with a fixed detail and status per code (DETAILS), rendered by the global
 * problem-details filter; other transports switch on `code`.
 */
export class MemoryError extends DomainError<MemoryErrorCode> {
  constructor(code: MemoryErrorCode) {
    super(code, DETAILS[code].detail, { status: DETAILS[code].status });
  }
}
