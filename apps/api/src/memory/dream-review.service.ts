/**
 * The owner's review of a Dream run held because its rewrite would drop or change entries the owner verified (openspec
 * memory "Requirement: Dream safety"): applying writes the held proposal when MEMORY.md is still the text the run read
 * (else 409 `dream_proposal_stale`), keeps a snapshot first and is recorded as a revertible `apply` run.
 */
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { DreamRun } from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { unifiedDiff } from '../common/text-diff';
import { AppEventBus } from '../events/event-bus';
import { DREAM_FINISHED_EVENT } from '../events/app-events';
import { DreamStore } from './dream-store';
import { MEMORY_CLOCK, type MemoryClock } from './memory-clock';
import { MemoryDocuments } from './memory-documents';
import { countMemoryEntries } from './memory-entries';
import { MemoryError } from './memory.errors';

@Injectable()
export class DreamReview {
  private readonly logger = new Logger(DreamReview.name);
  private readonly now: MemoryClock;

  constructor(
    private readonly memory: MemoryDocuments,
    private readonly store: DreamStore,
    private readonly events: AppEventBus,
    @Optional() @Inject(MEMORY_CLOCK) clock?: MemoryClock,
  ) {
    this.now = clock ?? (() => new Date());
  }

  /** Writes the proposal of held run `id`; the owner asked for it, so its new entries are the owner's. */
  async apply(id: string): Promise<DreamRun> {
    const held = await this.store.findRun(id);
    if (!held) throw new MemoryError('dream_run_not_found');
    const [read, proposal] = await Promise.all([this.store.readSnapshot(id), this.store.readProposal(id)]);
    if (held.outcome !== 'held' || read === null || proposal === null) throw new MemoryError('dream_run_not_held');
    const started = this.now();
    const runId = this.store.newRunId(started);
    await this.memory.updateDocument(
      'MEMORY.md',
      async (current) => {
        if (current !== read) throw new MemoryError('dream_proposal_stale');
        await this.store.saveSnapshot(runId, current);
        return { content: proposal, result: null };
      },
      { provenance: { origin: 'console', requested_by: 'owner', untrusted_sources: [] } },
    );
    const run: DreamRun = {
      id: runId,
      trigger: 'apply',
      started_at: started.toISOString(),
      finished_at: this.now().toISOString(),
      outcome: 'updated',
      detail: `applied the proposal held by run ${id}`,
      model: null,
      model_source: null,
      records_read: 0,
      cursors: {},
      entries_before: countMemoryEntries(read),
      entries_after: countMemoryEntries(proposal),
      diff: unifiedDiff(read, proposal, { before: 'MEMORY.md (before)', after: 'MEMORY.md (after)' }),
      revertible: true,
      applied_run_id: id,
    };
    await this.store.appendRun(run);
    this.logger.log(formatEvent('memory.dream.applied', { run_id: runId, held_run_id: id }));
    try {
      this.events.emit(DREAM_FINISHED_EVENT, { ran: true, reason: null, run });
    } catch {
      // listeners must not break the apply
    }
    return run;
  }
}
