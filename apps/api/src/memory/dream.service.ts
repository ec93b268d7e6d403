/**
 * Dream: long-term memory distillation (openspec memory), reviewable and reversible.
 *
 * One run: collect the records of every chat after its `.dream_cursor` entry, sorted by timestamp, the first
 * DREAM_BATCH_RECORDS of them → phase 1 (analysis) → phase 2 (the new MEMORY.md) → safety checks → write MEMORY.md
 * atomically (after keeping the previous text as a snapshot) → advance the cursor only over records actually given to
 * the model (records beyond the batch are taken by the next run; the original server skipped them) → record the run
 * with its diff. Runs never overlap. A failure leaves MEMORY.md and the cursor untouched.
 *
 * Model: the background model of the LLM settings, else the last model a turn used, else the run is skipped with a
 * log line. Safety: a rewrite that would drop more than half of the existing entries is refused (a `rejected` run,
 * nothing written); if MEMORY.md changed during the run, lines appended meanwhile (save_memory) are kept, and any
 * other change makes the run fail without writing (the user's edit wins; the records are retried next run).
 */
import { Inject, Injectable, Logger, type OnModuleDestroy, Optional } from '@nestjs/common';
import { AppEventBus, OnAppEvent } from '../events/event-bus';
import type { DreamRun, DreamTrigger, DreamTriggerResponse, LlmSelection } from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { unifiedDiff } from '../common/text-diff';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LLM_CLIENT_PROVIDER, type LlmClientProvider } from '../llm-settings/llm-provider';
import { BackgroundModel, BackgroundModelError } from './background-model';
import {
  advancedCursors,
  DREAM_ANALYSIS_PROMPT,
  DREAM_BATCH_RECORDS,
  DREAM_EDITOR_PROMPT,
  dropsTooMuch,
  formatDreamLines,
  NO_MEMORY_PLACEHOLDER,
  normaliseMemoryOutput,
  type TaggedRecord,
  untrustedRecords,
} from './dream-batch';
import { DreamStore, type DreamCursor } from './dream-store';
import { dreamMemoryView, dreamProvenance, droppedVerified, keptOutNote, withKeptOut } from './dream-trust';
import { countMemoryEntries } from './memory-entries';
import { MemoryError } from './memory.errors';
import { ChatDirectoryStore } from './chat-directory.store';
import { HistoryReader } from './history-reader';
import { MEMORY_CLOCK, type MemoryClock } from './memory-clock';
import { MemoryDocuments } from './memory-documents';
import { type HistoryRecord } from './memory.types';
import { DREAM_FINISHED_EVENT, SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';
import { trimTrailing } from '../common/trim';

/** the header of a Dream run's MEMORY.md diff */
const MEMORY_DIFF_LABELS = { before: 'MEMORY.md (before)', after: 'MEMORY.md (after)' };

type ModelSource = 'background' | 'last_turn';

type WriteResult =
  | { status: 'conflict'; current: string }
  | { status: 'same'; current: string }
  | { status: 'written'; current: string; next: string };

@Injectable()
export class DreamService implements OnModuleDestroy {
  private readonly logger = new Logger(DreamService.name);
  private readonly now: MemoryClock;
  private current: Promise<DreamTriggerResponse> | null = null;
  private readonly shutdown = new AbortController();
  /** records per run; tests may lower it */
  batchSize = DREAM_BATCH_RECORDS;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly memory: MemoryDocuments,
    private readonly chats: ChatDirectoryStore,
    private readonly history: HistoryReader,
    private readonly store: DreamStore,
    private readonly model: BackgroundModel,
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    private readonly events: AppEventBus,
    @Optional() @Inject(MEMORY_CLOCK) clock?: MemoryClock,
  ) {
    this.now = clock ?? (() => new Date());
  }

  /** Whether a run is in progress. */
  get running(): boolean {
    return this.current !== null;
  }

  /**
   * Runs Dream once. A scheduled trigger while a run is in progress is skipped (`ran: false`); a manual one throws
   * `dream_running` (409). Never throws for model or disk failures: they are recorded as a `failed` run.
   */
  run(trigger: Exclude<DreamTrigger, 'revert'>): Promise<DreamTriggerResponse> {
    if (this.current) {
      if (trigger === 'manual') return Promise.reject(new MemoryError('dream_running'));
      this.logger.log(formatEvent('memory.dream.skipped', { reason: 'running', trigger }));
      return Promise.resolve({ ran: false, reason: null, run: null });
    }
    const run = this.execute(trigger).finally(() => {
      this.current = null;
    });
    this.current = run;
    return run;
  }

  /** Resolves when no run is in progress. */
  async whenIdle(): Promise<void> {
    while (this.current) await this.current.catch(() => undefined);
  }

  /** Runs, newest first. */
  listRuns(limit?: number): Promise<DreamRun[]> {
    return this.store.listRuns(limit);
  }

  /** Restores MEMORY.md from the snapshot taken before run `id`; recorded as a `revert` run (itself revertible). */
  async revert(id: string): Promise<DreamRun> {
    const target = await this.store.findRun(id);
    if (!target) throw new MemoryError('dream_run_not_found');
    if (!target.revertible) throw new MemoryError('dream_run_not_revertible');
    const snapshot = await this.store.readSnapshot(id);
    if (snapshot === null) throw new MemoryError('dream_snapshot_missing');
    const started = this.now();
    const runId = this.store.newRunId(started);
    const { before } = await this.memory.updateDocument('MEMORY.md', async (current) => {
      await this.store.saveSnapshot(runId, current);
      return { content: snapshot, result: { before: current } };
    });
    const run: DreamRun = {
      id: runId,
      trigger: 'revert',
      started_at: started.toISOString(),
      finished_at: this.now().toISOString(),
      outcome: 'reverted',
      detail: `restored MEMORY.md as it was before run ${id}`,
      model: null,
      model_source: null,
      records_read: 0,
      cursors: {},
      entries_before: countMemoryEntries(before),
      entries_after: countMemoryEntries(snapshot),
      diff: unifiedDiff(before, snapshot, MEMORY_DIFF_LABELS),
      revertible: true,
      reverted_run_id: id,
    };
    await this.store.appendRun(run);
    this.logger.log(formatEvent('memory.dream.reverted', { run_id: runId, reverted_run_id: id }));
    this.emitFinished({ ran: true, reason: null, run });
    return run;
  }

  /** A deleted chat loses its cursor entry, so a new chat with the same id starts from its first record. */
  @OnAppEvent(SESSION_DELETED_EVENT)
  async onSessionDeleted(event: SessionDeletedEvent): Promise<void> {
    try {
      await this.store.updateCursor((cursor) => {
        if (!(event.chatId in cursor)) return null;
        const next = { ...cursor };
        delete next[event.chatId];
        return next;
      });
    } catch (error) {
      this.logger.warn(
        formatEvent('memory.dream.cursor_clear_failed', {
          chat_id: event.chatId,
          error_type: error instanceof Error ? error.name : 'unknown',
        }),
      );
    }
  }

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  // ---------------------------------------------------------------------------------------------- internals

  private async execute(trigger: Exclude<DreamTrigger, 'revert'>): Promise<DreamTriggerResponse> {
    const started = this.now();
    const { newRecords, batch } = await this.collect();
    if (batch.length === 0) {
      this.logger.debug(formatEvent('memory.dream.skipped', { reason: 'no_new_records', trigger }));
      return this.emitFinished({ ran: false, reason: 'no_new_records', run: null });
    }
    const choice = this.chooseModel();
    if (!choice) {
      this.logger.log(
        formatEvent('memory.dream.skipped', {
          reason: 'no_model',
          trigger,
          pending_records: batch.length,
          detail: 'no background model is set and no turn has used a model since start',
        }),
      );
      return this.emitFinished({ ran: false, reason: 'no_model', run: null });
    }
    const runId = this.store.newRunId(started);
    const cursors = advancedCursors(newRecords, batch);
    // what followed untrusted content in a chat is never Dream's input: no unverified untrusted fact is promoted
    const leftOut = untrustedRecords(batch);
    const base: Omit<DreamRun, 'finished_at' | 'outcome' | 'detail' | 'entries_after' | 'diff' | 'revertible' | 'cursors'> & {
      verified_dropped?: string[];
    } = {
      id: runId,
      trigger,
      started_at: started.toISOString(),
      model: choice.selection,
      model_source: choice.source,
      records_read: batch.length,
      entries_before: 0,
    };
    this.logger.log(
      formatEvent('memory.dream.started', {
        run_id: runId,
        trigger,
        records: batch.length,
        untrusted_left_out: leftOut.size,
        chats: Object.keys(cursors).length,
        provider: choice.selection.provider,
        model: choice.selection.model,
        model_source: choice.source,
      }),
    );

    const [memoryBefore, log] = await Promise.all([this.memory.readDocument('MEMORY.md'), this.memory.provenance.readAll()]);
    base.entries_before = countMemoryEntries(memoryBefore);
    // unverified entries from untrusted content are kept out of the input (only marked) and put back unchanged
    const view = dreamMemoryView(memoryBefore, log.records);
    const memoryText = (view.text.trim() !== '' ? view.text.trim() : NO_MEMORY_PLACEHOLDER) + keptOutNote(view.keptOut);

    let proposal: string;
    try {
      const analysis = await this.model.complete({
        purpose: 'dream',
        selection: choice.selection,
        system: DREAM_ANALYSIS_PROMPT,
        user: `## Recent conversation\n${formatDreamLines(batch, leftOut)}\n\n## Current long-term memory\n${memoryText}`,
        timeoutMs: this.config.backgroundModelTimeoutMs,
        signal: this.shutdown.signal,
      });
      proposal = normaliseMemoryOutput(
        await this.model.complete({
          purpose: 'dream',
          selection: choice.selection,
          system: DREAM_EDITOR_PROMPT,
          user: `## Analysis report\n${analysis.trim()}\n\n## Current MEMORY.md\n${memoryText}`,
          timeoutMs: this.config.backgroundModelTimeoutMs,
          signal: this.shutdown.signal,
        }),
      );
    } catch (error) {
      const kind = error instanceof BackgroundModelError ? error.kind : 'internal';
      const message = error instanceof BackgroundModelError ? error.message : 'internal error';
      return this.finish({ ...base, outcome: 'failed', detail: `model call failed (${kind}): ${message}` }, null, memoryBefore);
    }

    if (proposal === '') {
      return this.finish({ ...base, outcome: 'unchanged', detail: 'the model proposed no content' }, cursors, memoryBefore);
    }
    // the loss guard judges what Dream was shown; the kept-out entries are not Dream's to drop
    const entriesAfter = countMemoryEntries(proposal);
    if (dropsTooMuch(countMemoryEntries(view.text), entriesAfter)) {
      return this.finish(
        {
          ...base,
          outcome: 'rejected',
          detail: `the rewrite would keep ${entriesAfter} of ${countMemoryEntries(view.text)} entries (more than half dropped); MEMORY.md was not changed`,
        },
        cursors,
        memoryBefore,
        proposal,
      );
    }
    proposal = withKeptOut(proposal, view.keptOut);
    base.provenance = dreamProvenance(view, proposal);
    const dropped = droppedVerified(view.verified, proposal);
    if (dropped.length > 0) {
      // entries the owner verified are never dropped or rewritten by Dream alone: the proposal waits for the owner
      await this.store.saveSnapshot(runId, memoryBefore);
      await this.store.saveProposal(runId, proposal);
      const detail = `the rewrite would drop or change ${dropped.length} verified ${dropped.length === 1 ? 'entry' : 'entries'}; held for review, MEMORY.md was not changed`;
      return this.finish({ ...base, outcome: 'held', detail, verified_dropped: dropped }, cursors, memoryBefore, proposal);
    }

    // write under the MEMORY.md lane: keep lines save_memory appended meanwhile; any other change wins over Dream
    const written = await this.memory.updateDocument<WriteResult>('MEMORY.md', async (current) => {
      let next = proposal;
      if (current !== memoryBefore) {
        if (!current.startsWith(memoryBefore)) return { content: null, result: { status: 'conflict', current } };
        const appended = current.slice(memoryBefore.length).trim();
        if (appended !== '') next = `${trimTrailing(proposal, '\n')}\n${appended}\n`;
      }
      if (next === current) return { content: null, result: { status: 'same', current } };
      await this.store.saveSnapshot(runId, current);
      return { content: next, result: { status: 'written', current, next } };
    }, { deferred: true, provenance: { origin: 'dream', requested_by: 'server', dream_run_id: runId, untrusted_sources: [] } });
    switch (written.status) {
      case 'conflict':
        return this.finish(
          { ...base, outcome: 'failed', detail: 'MEMORY.md was edited during the run; nothing was written' },
          null,
          memoryBefore,
        );
      case 'same':
        return this.finish({ ...base, outcome: 'unchanged', detail: null }, cursors, written.current);
      case 'written':
        return this.finish({ ...base, outcome: 'updated', detail: null }, cursors, written.current, written.next, true);
    }
  }

  /** Advances the cursor (when given), records the run with its diff and tells listeners. */
  private async finish(
    partial: Omit<DreamRun, 'finished_at' | 'entries_after' | 'diff' | 'revertible' | 'cursors'>,
    cursors: DreamCursor | null,
    before: string,
    after: string = before,
    revertible = false,
  ): Promise<DreamTriggerResponse> {
    let advanced: DreamCursor = {};
    if (cursors) advanced = await this.advanceCursor(cursors);
    const run: DreamRun = {
      ...partial,
      finished_at: this.now().toISOString(),
      cursors: advanced,
      entries_after: countMemoryEntries(after),
      diff: unifiedDiff(before, after, MEMORY_DIFF_LABELS),
      revertible,
    };
    await this.store.appendRun(run);
    const fields = {
      run_id: run.id,
      outcome: run.outcome,
      records: run.records_read,
      entries_before: run.entries_before,
      entries_after: run.entries_after,
    };
    if (run.outcome === 'failed' || run.outcome === 'rejected' || run.outcome === 'held') {
      this.logger.warn(formatEvent('memory.dream.finished', { ...fields, detail: run.detail }));
    } else {
      this.logger.log(formatEvent('memory.dream.finished', fields));
    }
    return this.emitFinished({ ran: true, reason: null, run });
  }

  /** Moves each chat's cursor forward (never back), skipping chats deleted meanwhile; returns what was written. */
  private async advanceCursor(cursors: DreamCursor): Promise<DreamCursor> {
    const existing: DreamCursor = {};
    for (const [chatId, cursor] of Object.entries(cursors)) {
      if (await this.chats.chatExists(chatId)) existing[chatId] = cursor;
    }
    if (Object.keys(existing).length === 0) return existing;
    await this.store.updateCursor((stored) => ({ ...stored, ...existing }));
    return existing;
  }

  /** New records of every chat (after its cursor), and the batch: the first `batchSize` by timestamp. */
  private async collect(): Promise<{ newRecords: Map<string, HistoryRecord[]>; batch: TaggedRecord[] }> {
    const cursor = await this.store.readCursor();
    const newRecords = new Map<string, HistoryRecord[]>();
    const all: TaggedRecord[] = [];
    const chatIds = (await this.chats.listChatIds()).sort();
    for (const chatId of chatIds) {
      let after = cursor[chatId] ?? 0;
      const last = await this.history.lastCursor(chatId);
      if (last === after) continue;
      // a history whose last cursor is below the stored one was re-created: read it from the start
      if (last < after) after = 0;
      const records = (await this.history.readRecords(chatId)).filter((record) => record.cursor > after);
      if (records.length === 0) continue;
      newRecords.set(chatId, records);
      for (const record of records) all.push({ chatId, record });
    }
    // stable sort by timestamp string; ties keep chat then cursor order
    all.sort((a, b) => (a.record.timestamp < b.record.timestamp ? -1 : a.record.timestamp > b.record.timestamp ? 1 : 0));
    return { newRecords, batch: all.slice(0, this.batchSize) };
  }

  private chooseModel(): { selection: LlmSelection; source: ModelSource } | null {
    const background = this.llm.backgroundSelection();
    if (background) {
      if (this.llm.isReady(background.provider)) return { selection: background, source: 'background' };
      this.logger.warn(
        formatEvent('memory.dream.background_model_unavailable', { provider: background.provider, action: 'fallback' }),
      );
    }
    const last = this.llm.lastSelection();
    if (last && this.llm.isReady(last.provider)) return { selection: last, source: 'last_turn' };
    return null;
  }

  private emitFinished(result: DreamTriggerResponse): DreamTriggerResponse {
    try {
      this.events.emit(DREAM_FINISHED_EVENT, result);
    } catch {
      // listeners must not break Dream
    }
    return result;
  }
}
