import { Injectable, computed, inject, signal } from '@angular/core';
import type { DreamRun, DreamTriggerResponse, MemoryDocumentResponse, SoulDocumentResponse } from '@cashcode/contracts';

import { ApiError, errorMessage } from '../core/api/api-error';
import { MemoryApi, type MemoryDocumentKind } from './memory-api';
import { I18n } from '../core/i18n/i18n';

export interface DocumentState {
  /** the version last read from or written to the server */
  saved: MemoryDocumentResponse | SoulDocumentResponse | null;
  draft: string;
  saving: boolean;
  /** the server answered 409: the file changed since it was read */
  conflict: boolean;
  error: string | null;
  /** a save just succeeded (cleared by the next edit) */
  justSaved: boolean;
}

export interface StatusMessage {
  kind: 'success' | 'error' | 'info';
  text: string;
}

const EMPTY_DOCUMENT: DocumentState = { saved: null, draft: '', saving: false, conflict: false, error: null, justSaved: false };

/** State of the Memory view: the two editors (with optimistic-concurrency conflicts) and the Dream history. */
@Injectable()
export class MemoryStore {
  private readonly api = inject(MemoryApi);
  private readonly i18n = inject(I18n);

  private readonly documents = signal<Record<MemoryDocumentKind, DocumentState>>({
    memory: EMPTY_DOCUMENT,
    soul: EMPTY_DOCUMENT,
  });
  private readonly runsState = signal<DreamRun[]>([]);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly dreamBusy = signal<'idle' | 'running' | 'reverting'>('idle');
  private readonly dreamOutcome = signal<StatusMessage | null>(null);

  readonly memory = computed(() => this.documents().memory);
  readonly soul = computed(() => this.documents().soul);
  readonly runs = this.runsState.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly dreamAction = this.dreamBusy.asReadonly();
  readonly dreamMessage = this.dreamOutcome.asReadonly();

  document(kind: MemoryDocumentKind): DocumentState {
    return this.documents()[kind];
  }

  isDirty(kind: MemoryDocumentKind): boolean {
    const state = this.documents()[kind];
    return state.saved !== null && state.draft !== state.saved.content;
  }

  async load(): Promise<void> {
    this.loadingFlag.set(true);
    this.loadFailure.set(null);
    try {
      const [memory, soul, dreams] = await Promise.all([
        this.api.getDocument('memory'),
        this.api.getDocument('soul'),
        this.api.listDreams(),
      ]);
      this.setDocument('memory', { ...EMPTY_DOCUMENT, saved: memory, draft: memory.content });
      this.setDocument('soul', { ...EMPTY_DOCUMENT, saved: soul, draft: soul.content });
      this.runsState.set(dreams.runs);
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  edit(kind: MemoryDocumentKind, text: string): void {
    this.patch(kind, { draft: text, justSaved: false, error: null });
  }

  /** Saves the draft based on the version it was read from; a 409 marks a conflict and keeps the draft. */
  async save(kind: MemoryDocumentKind): Promise<void> {
    const state = this.documents()[kind];
    if (!state.saved || state.saving) return;
    await this.write(kind, state.draft, state.saved.hash);
  }

  /** Conflict resolution: throw the draft away and load the current version. */
  async reload(kind: MemoryDocumentKind): Promise<void> {
    try {
      const current = await this.api.getDocument(kind);
      this.setDocument(kind, { ...EMPTY_DOCUMENT, saved: current, draft: current.content });
    } catch (error) {
      this.patch(kind, { error: errorMessage(error) });
    }
  }

  /** Conflict resolution: keep the draft and write it over the current version. */
  async overwrite(kind: MemoryDocumentKind): Promise<void> {
    const draft = this.documents()[kind].draft;
    try {
      const current = await this.api.getDocument(kind);
      await this.write(kind, draft, current.hash);
    } catch (error) {
      this.patch(kind, { error: errorMessage(error) });
    }
  }

  /** Runs Dream now, then refreshes the history and (when not being edited) MEMORY.md. */
  async runDream(): Promise<void> {
    if (this.dreamBusy() !== 'idle') return;
    this.dreamBusy.set('running');
    this.dreamOutcome.set(null);
    try {
      const result = await this.api.runDream();
      this.dreamOutcome.set(this.describe(result));
      await this.refreshAfterDream();
    } catch (error) {
      this.dreamOutcome.set({ kind: 'error', text: this.i18n.t('memory.dream.runFailed', { detail: errorMessage(error) }) });
    } finally {
      this.dreamBusy.set('idle');
    }
  }

  async revert(run: DreamRun): Promise<void> {
    if (this.dreamBusy() !== 'idle') return;
    this.dreamBusy.set('reverting');
    this.dreamOutcome.set(null);
    try {
      await this.api.revertDream(run.id);
      this.dreamOutcome.set({ kind: 'success', text: this.i18n.t('memory.dream.reverted') });
      await this.refreshAfterDream();
    } catch (error) {
      this.dreamOutcome.set({ kind: 'error', text: this.i18n.t('memory.dream.revertFailed', { detail: errorMessage(error) }) });
    } finally {
      this.dreamBusy.set('idle');
    }
  }

  /** Writes the proposal of a run held because it would drop or change verified entries. */
  async apply(run: DreamRun): Promise<void> {
    if (this.dreamBusy() !== 'idle') return;
    this.dreamBusy.set('reverting');
    this.dreamOutcome.set(null);
    try {
      await this.api.applyDream(run.id);
      this.dreamOutcome.set({ kind: 'success', text: this.i18n.t('memory.dream.applied') });
      await this.refreshAfterDream();
    } catch (error) {
      this.dreamOutcome.set({ kind: 'error', text: this.i18n.t('memory.dream.applyFailed', { detail: errorMessage(error) }) });
    } finally {
      this.dreamBusy.set('idle');
    }
  }

  private async write(kind: MemoryDocumentKind, content: string, hash: string): Promise<void> {
    this.patch(kind, { saving: true, error: null, justSaved: false });
    try {
      const saved = await this.api.saveDocument(kind, { content, hash });
      // keep typing made during the request
      const draft = this.documents()[kind].draft === content ? saved.content : this.documents()[kind].draft;
      this.setDocument(kind, { ...EMPTY_DOCUMENT, saved, draft, justSaved: true });
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        this.patch(kind, { saving: false, conflict: true, error: null });
      } else {
        this.patch(kind, { saving: false, error: this.i18n.t('memory.memory.saveFailed', { detail: errorMessage(error) }) });
      }
    }
  }

  private async refreshAfterDream(): Promise<void> {
    const [dreams, memory] = await Promise.all([this.api.listDreams(), this.api.getDocument('memory')]);
    this.runsState.set(dreams.runs);
    // an open edit keeps its draft and base version: saving it later reports the conflict
    if (!this.isDirty('memory')) this.setDocument('memory', { ...EMPTY_DOCUMENT, saved: memory, draft: memory.content });
  }

  private describe(result: DreamTriggerResponse): StatusMessage {
    if (!result.ran || !result.run) {
      return { kind: 'info', text: this.i18n.t(result.reason === 'no_model' ? 'memory.dream.noModel' : 'memory.dream.noRecords') };
    }
    const outcome = this.i18n.t(`memory.dream.outcome.${result.run.outcome}`);
    const kind = result.run.outcome === 'failed' || result.run.outcome === 'rejected' ? 'error' : 'success';
    return { kind, text: this.i18n.t('memory.dream.finished', { outcome }) };
  }

  private setDocument(kind: MemoryDocumentKind, state: DocumentState): void {
    this.documents.update((documents) => ({ ...documents, [kind]: state }));
  }

  private patch(kind: MemoryDocumentKind, change: Partial<DocumentState>): void {
    this.documents.update((documents) => ({ ...documents, [kind]: { ...documents[kind], ...change } }));
  }
}
