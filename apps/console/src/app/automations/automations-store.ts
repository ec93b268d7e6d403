import { DestroyRef, Injectable, computed, inject, signal } from '@angular/core';
import type { Automation, AutomationRun, LlmModelEntry, SchedulePreviewResponse, TelegramApprovedSender } from '@cashcode/contracts';

import { ApiError, errorMessage } from '../core/api/api-error';
import { ChatSocket } from '../core/socket/chat-socket';
import { automationRunEvent } from './automation-run';
import {
  automationInput,
  checkDraft,
  draftInput,
  draftOf,
  draftSchedule,
  newDraft,
  problemFieldErrors,
  type AutomationDraft,
  type DraftField,
} from './automation-form';
import { browserTimeZone } from './automation-time';
import { AutomationsApi } from './automations-api';

/** Wait after the last keystroke of a schedule before asking the server for its preview. */
export const PREVIEW_DEBOUNCE_MS = 300;

export interface EditorState {
  /** null: a new automation */
  id: string | null;
  draft: AutomationDraft;
}

/** An error at a field: an i18n key from the client's checks, or the server's text. */
export interface FieldMessage {
  key?: string;
  text?: string;
}

/** Newest first, a run replacing the one with its id. */
export function mergeRun(runs: readonly AutomationRun[], run: AutomationRun): AutomationRun[] {
  const index = runs.findIndex((entry) => entry.id === run.id);
  if (index >= 0) return runs.map((entry, i) => (i === index ? run : entry));
  return [run, ...runs];
}

/**
 * State of the Automations page: the list, the editor with its live schedule preview, the open run history (paged)
 * and each row's action. `automation_run` events update the row and the history as runs start and end.
 */
@Injectable()
export class AutomationsStore {
  private readonly api = inject(AutomationsApi);

  private readonly items = signal<Automation[]>([]);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly editorState = signal<EditorState | null>(null);
  private readonly fieldMessages = signal<Partial<Record<DraftField, FieldMessage>>>({});
  private readonly savingFlag = signal(false);
  private readonly previewValue = signal<SchedulePreviewResponse | null>(null);
  private readonly previewFailure = signal<string | null>(null);
  private readonly modelList = signal<LlmModelEntry[]>([]);
  private readonly toolList = signal<string[]>([]);
  private readonly senderList = signal<TelegramApprovedSender[]>([]);
  private readonly historyId = signal<string | null>(null);
  private readonly runList = signal<AutomationRun[]>([]);
  private readonly runsCursor = signal<string | null>(null);
  private readonly runsLoadingFlag = signal(false);
  private readonly runsFailure = signal<string | null>(null);
  private readonly busyIds = signal<ReadonlySet<string>>(new Set());
  private readonly rowFailures = signal<Readonly<Record<string, string>>>({});
  private previewTimer: ReturnType<typeof setTimeout> | null = null;
  private previewSeq = 0;

  readonly automations = computed(() => [...this.items()].sort((a, b) => a.name.localeCompare(b.name)));
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly editor = this.editorState.asReadonly();
  /** the editor is open on a new automation */
  readonly creating = computed(() => this.editorState()?.id === null);
  /** the id of the automation the editor is open on (null: none, or a new one) */
  readonly editingId = computed(() => this.editorState()?.id ?? null);
  readonly fieldErrors = this.fieldMessages.asReadonly();
  readonly saving = this.savingFlag.asReadonly();
  readonly preview = this.previewValue.asReadonly();
  readonly previewError = this.previewFailure.asReadonly();
  readonly models = this.modelList.asReadonly();
  readonly tools = this.toolList.asReadonly();
  /** the approved Telegram senders a run can be delivered to */
  readonly senders = this.senderList.asReadonly();
  readonly openHistoryId = this.historyId.asReadonly();
  readonly runs = this.runList.asReadonly();
  readonly hasMoreRuns = computed(() => this.runsCursor() !== null);
  readonly runsLoading = this.runsLoadingFlag.asReadonly();
  readonly runsError = this.runsFailure.asReadonly();
  readonly busy = this.busyIds.asReadonly();
  readonly rowErrors = this.rowFailures.asReadonly();

  constructor() {
    const subscription = inject(ChatSocket).events.subscribe((event) => {
      const runEvent = automationRunEvent(event);
      if (runEvent) this.onRun(runEvent.run);
    });
    inject(DestroyRef).onDestroy(() => {
      subscription.unsubscribe();
      if (this.previewTimer) clearTimeout(this.previewTimer);
    });
  }

  async load(): Promise<void> {
    this.loadFailure.set(null);
    if (this.items().length === 0) this.loadingFlag.set(true);
    try {
      this.items.set((await this.api.list()).automations);
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  /** The models and tools the editor offers (best effort: without them the editor keeps the defaults). */
  async loadChoices(): Promise<void> {
    const [models, tools, senders] = await Promise.allSettled([this.api.models(), this.api.tools(), this.api.telegramSenders()]);
    if (models.status === 'fulfilled') this.modelList.set(models.value.models);
    if (tools.status === 'fulfilled') this.toolList.set(tools.value.known_tools.map((tool) => tool.name).sort());
    if (senders.status === 'fulfilled') this.senderList.set(senders.value.senders);
  }

  openNew(): void {
    this.openEditor({ id: null, draft: newDraft(browserTimeZone()) });
  }

  openEdit(automation: Automation): void {
    this.openEditor({ id: automation.id, draft: draftOf(automation, browserTimeZone()) });
  }

  closeEditor(): void {
    this.editorState.set(null);
    this.fieldMessages.set({});
    this.previewValue.set(null);
    this.previewFailure.set(null);
  }

  /** Changes the draft; a schedule change asks for a new preview (debounced). */
  edit(change: Partial<AutomationDraft>): void {
    const state = this.editorState();
    if (!state) return;
    const draft = { ...state.draft, ...change };
    this.editorState.set({ ...state, draft });
    const touched = Object.keys(change) as (keyof AutomationDraft)[];
    // a field edited again loses its error
    const cleared = { ...this.fieldMessages() };
    for (const key of touched) delete cleared[fieldOfDraftKey(key)];
    delete cleared.form;
    this.fieldMessages.set(cleared);
    if (touched.some((key) => SCHEDULE_KEYS.has(key))) this.schedulePreview(draft);
  }

  /** Saves the editor; true when saved (the editor closes). Errors land at their fields. */
  async save(): Promise<boolean> {
    const state = this.editorState();
    if (!state || this.savingFlag()) return false;
    const checks = checkDraft(state.draft);
    if (Object.keys(checks).length > 0) {
      this.fieldMessages.set(Object.fromEntries(Object.entries(checks).map(([field, key]) => [field, { key }])));
      return false;
    }
    this.savingFlag.set(true);
    try {
      const input = draftInput(state.draft);
      const saved = state.id === null ? await this.api.create(input) : await this.api.update(state.id, input);
      this.upsert(saved);
      this.closeEditor();
      return true;
    } catch (error) {
      this.fieldMessages.set(serverFieldMessages(error));
      return false;
    } finally {
      this.savingFlag.set(false);
    }
  }

  /** Pauses or resumes an automation (the same automation with `enabled` flipped). */
  async setEnabled(automation: Automation, enabled: boolean): Promise<void> {
    await this.rowAction(automation.id, async () => {
      this.upsert(await this.api.update(automation.id, { ...automationInput(automation), enabled }));
    });
  }

  /** Starts a run now; the row shows it running (a run already going is refused with the server's message). */
  async runNow(automation: Automation): Promise<boolean> {
    return this.rowAction(automation.id, async () => {
      const { run } = await this.api.runNow(automation.id);
      this.onRun(run);
    });
  }

  async remove(automation: Automation): Promise<boolean> {
    return this.rowAction(automation.id, async () => {
      await this.api.remove(automation.id);
      this.items.update((items) => items.filter((item) => item.id !== automation.id));
      if (this.historyId() === automation.id) this.historyId.set(null);
      if (this.editorState()?.id === automation.id) this.closeEditor();
    });
  }

  /** Opens an automation's run history (or closes it when open). */
  async toggleHistory(id: string): Promise<void> {
    if (this.historyId() === id) {
      this.historyId.set(null);
      return;
    }
    this.historyId.set(id);
    this.runList.set([]);
    this.runsCursor.set(null);
    await this.loadRuns(id, null);
  }

  async moreRuns(): Promise<void> {
    const id = this.historyId();
    const before = this.runsCursor();
    if (id !== null && before !== null) await this.loadRuns(id, before);
  }

  /** A run started or ended: its row and, when open, its history. The list is reloaded for the next due time. */
  onRun(run: AutomationRun): void {
    this.items.update((items) =>
      items.map((item) => (item.id === run.automation_id ? { ...item, last_run: run, running: run.outcome === 'running' } : item)),
    );
    if (this.historyId() === run.automation_id) this.runList.update((runs) => mergeRun(runs, run));
    if (run.outcome !== 'running') void this.load();
  }

  private openEditor(state: EditorState): void {
    this.editorState.set(state);
    this.fieldMessages.set({});
    this.previewValue.set(null);
    this.previewFailure.set(null);
    this.schedulePreview(state.draft, 0);
    void this.loadChoices();
  }

  private schedulePreview(draft: AutomationDraft, delay = PREVIEW_DEBOUNCE_MS): void {
    if (this.previewTimer) clearTimeout(this.previewTimer);
    const seq = ++this.previewSeq;
    const schedule = draftSchedule(draft);
    if (schedule === null) {
      this.previewValue.set(null);
      this.previewFailure.set(null);
      return;
    }
    this.previewTimer = setTimeout(() => {
      this.api.preview(schedule).then(
        (preview) => {
          if (seq !== this.previewSeq) return;
          this.previewFailure.set(null);
          this.previewValue.set(preview);
        },
        (error: unknown) => {
          if (seq !== this.previewSeq) return;
          this.previewValue.set(null);
          const messages = serverFieldMessages(error);
          this.previewFailure.set(messages.schedule?.text ?? messages.form?.text ?? errorMessage(error));
        },
      );
    }, delay);
  }

  private async loadRuns(id: string, before: string | null): Promise<void> {
    this.runsLoadingFlag.set(true);
    this.runsFailure.set(null);
    try {
      const page = await this.api.runs(id, before);
      if (this.historyId() !== id) return;
      this.runList.update((runs) => page.runs.reduce((all, run) => (all.some((entry) => entry.id === run.id) ? all : [...all, run]), before === null ? [] : runs));
      this.runsCursor.set(page.next_before);
    } catch (error) {
      if (this.historyId() === id) this.runsFailure.set(errorMessage(error));
    } finally {
      this.runsLoadingFlag.set(false);
    }
  }

  private upsert(automation: Automation): void {
    this.items.update((items) =>
      items.some((item) => item.id === automation.id) ? items.map((item) => (item.id === automation.id ? automation : item)) : [...items, automation],
    );
  }

  private async rowAction(id: string, action: () => Promise<void>): Promise<boolean> {
    if (this.busyIds().has(id)) return false;
    this.busyIds.update((ids) => new Set([...ids, id]));
    this.rowFailures.update(({ [id]: _dropped, ...rest }) => rest);
    try {
      await action();
      return true;
    } catch (error) {
      this.rowFailures.update((failures) => ({ ...failures, [id]: errorMessage(error) }));
      return false;
    } finally {
      this.busyIds.update((ids) => new Set([...ids].filter((entry) => entry !== id)));
    }
  }
}

const SCHEDULE_KEYS: ReadonlySet<keyof AutomationDraft> = new Set(['scheduleKind', 'cronExpression', 'timezone', 'intervalValue', 'intervalUnit', 'onceAt']);

function fieldOfDraftKey(key: keyof AutomationDraft): DraftField {
  if (SCHEDULE_KEYS.has(key)) return 'schedule';
  switch (key) {
    case 'budgetTokens':
    case 'budgetUsd':
      return 'budget';
    case 'maxRunMinutes':
      return 'maxRun';
    case 'name':
    case 'prompt':
    case 'model':
    case 'tools':
      return key;
    default:
      return 'form';
  }
}

/** A refused request as messages at the fields (problem+json field errors), or one at the form. */
function serverFieldMessages(error: unknown): Partial<Record<DraftField, FieldMessage>> {
  if (!(error instanceof ApiError)) return { form: { text: errorMessage(error) } };
  const byField = problemFieldErrors(error.fieldErrors, error.code, error.detail);
  return Object.fromEntries(Object.entries(byField).map(([field, text]) => [field, { text }]));
}
