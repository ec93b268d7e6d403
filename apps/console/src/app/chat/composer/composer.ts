import { CdkTextareaAutosize, TextFieldModule } from '@angular/cdk/text-field';
import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  afterRenderEffect,
  computed,
  effect,
  inject,
  input,
  linkedSignal,
  output,
  signal,
  untracked,
  viewChild,
} from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSelectModule, type MatSelectChange } from '@angular/material/select';
import { MatTooltipModule } from '@angular/material/tooltip';
import type { AttachmentReceipt, LlmProvider, LlmSelection } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { CapabilityCatalog, type CatalogStatus } from '../capability-picker/capability-catalog';
import { CapabilityPicker } from '../capability-picker/capability-picker';
import {
  CAPABILITY_KINDS,
  NO_SELECTIONS,
  addSelection,
  filterCapabilities,
  findMentionTrigger,
  pickerKeyAction,
  removeMention,
  removeSelection,
  selectionCount,
  type CapabilityItem,
  type CapabilityKind,
  type CapabilitySelections,
  type MentionTrigger,
  type PickerKeyAction,
  type PickerLevel,
  type SelectionError,
} from '../capability-picker/capability-rules';
import { AttachmentChips } from '../attachments/attachment-chips';
import { extensionFor, filesOf } from '../attachments/attachment-rules';
import { AttachmentUploads } from '../attachments/attachment-uploads';
import { canSend, isSendKey } from '../composer-rules';
import { isRecallKey } from '../composer-recall';
import { parseStoredSelection, selectionKey, type ModelGroup } from '../model-selection';

const PROVIDER_LABELS: Record<LlmProvider, MessageKey> = {
  openai_compatible: 'provider.openai_compatible',
  ollama: 'provider.ollama',
  anthropic: 'provider.anthropic',
};

const SELECTION_ERRORS: Record<SelectionError, MessageKey> = {
  tooMany: 'picker.error.tooMany',
  invalidSkill: 'picker.error.invalidSkill',
  invalidMcp: 'picker.error.invalidMcp',
  labelTooLong: 'picker.error.labelTooLong',
};

/** What Send hands to the page: the typed text and the chips. */
export interface ComposerSubmission {
  text: string;
  selections: CapabilitySelections;
  /** the uploaded files the message refers to */
  attachments: AttachmentReceipt[];
}

/** The picker's navigation state, tied to the `@` it was opened for. */
interface PickerState {
  start: number;
  level: PickerLevel;
  active: number;
  /** the query `active` belongs to: a new query starts at the first row again */
  query: string;
}

interface OpenPicker {
  trigger: MentionTrigger;
  level: PickerLevel;
  active: number;
  count: number;
  items: CapabilityItem[];
  status: CatalogStatus;
  error: string | null;
}

let nextComposerId = 0;

/** the name of a pasted file without one (a screenshot): `pasted-1.png` */
function pastedName(index: number, type: string): string {
  return `pasted-${index + 1}.${extensionFor(type)}`;
}

/**
 * The message composer: auto-growing textarea (Enter sends, Shift+Enter newline), the `@` capability picker with
 * its chips (openspec console), model picker grouped by provider, refresh, and Send — or Stop while the open chat is
 * generating. Chips, the selection error and the picker belong to the open chat: switching chats clears them (the
 * typed text stays).
 */
@Component({
  selector: 'cc-composer',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    TextFieldModule,
    MatButtonModule,
    MatSelectModule,
    MatTooltipModule,
    MatProgressSpinnerModule,
    Icon,
    CapabilityPicker,
    AttachmentChips,
  ],
  providers: [AttachmentUploads],
  templateUrl: './composer.html',
  styleUrl: './composer.scss',
  host: { '(document:pointerdown)': 'onDocumentPointerDown($event)' },
})
export class Composer {
  readonly chatId = input<string | null>(null);
  readonly generating = input(false);
  /** the open chat can take a message (history loaded) */
  readonly chatReady = input(false);
  readonly modelGroups = input<readonly ModelGroup[]>([]);
  readonly selection = input<LlmSelection | null>(null);
  readonly modelsLoading = input(false);
  readonly modelsError = input<string | null>(null);
  readonly providerErrors = input<readonly { provider: LlmProvider; error: string }[]>([]);
  /** error from the last send attempt (translated by the page) */
  readonly sendError = input<string | null>(null);

  readonly send = output<ComposerSubmission>();
  readonly stop = output<void>();
  /** ↑ in an empty composer: the page puts the last user message back (composer-recall.ts) */
  readonly recall = output<void>();
  readonly refreshModels = output<void>();
  readonly selectModel = output<LlmSelection>();

  protected readonly i18n = inject(I18n);
  /** files dropped, pasted or picked: uploaded at once, shown as chips, sent with the message */
  protected readonly uploads = inject(AttachmentUploads);
  protected readonly dragging = signal(false);
  private readonly catalog = inject(CapabilityCatalog);
  private readonly host = inject<ElementRef<HTMLElement>>(ElementRef);
  private readonly injector = inject(Injector);
  protected readonly pickerId = `cc-capability-list-${nextComposerId++}`;
  protected readonly text = signal('');
  private readonly caret = signal(0);
  private readonly textarea = viewChild.required<ElementRef<HTMLTextAreaElement>>('textarea');
  private readonly autosize = viewChild.required(CdkTextareaAutosize);

  private readonly trigger = computed(() => findMentionTrigger(this.text(), this.caret()));
  /** chips of the open chat */
  protected readonly selections = linkedSignal<string | null, CapabilitySelections>({
    source: this.chatId,
    computation: () => NO_SELECTIONS,
  });
  private readonly selectionErrorKey = linkedSignal<string | null, SelectionError | null>({
    source: this.chatId,
    computation: () => null,
  });
  /** the `@` position the picker was dismissed for; switching chats dismisses the one under the caret */
  private readonly suppressedStart = linkedSignal<string | null, number | null>({
    source: this.chatId,
    computation: (_chatId, previous) =>
      previous === undefined || previous.source === null ? null : (untracked(this.trigger)?.start ?? null),
  });
  private readonly pickerState = linkedSignal<string | null, PickerState | null>({
    source: this.chatId,
    computation: () => null,
  });

  protected readonly openPicker = computed<OpenPicker | null>(() => {
    const trigger = this.trigger();
    if (trigger === null || this.generating() || this.suppressedStart() === trigger.start) return null;
    const state = this.pickerState();
    const current = state !== null && state.start === trigger.start ? state : null;
    const level = current?.level ?? 'category';
    let items: CapabilityItem[] = [];
    let status: CatalogStatus = 'loaded';
    let error: string | null = null;
    if (level !== 'category') {
      const list = level === 'skill' ? this.catalog.skills() : this.catalog.mcp();
      status = list.status;
      error = list.error;
      items = status === 'loaded' ? filterCapabilities(list.items, trigger.query) : [];
    }
    const count = level === 'category' ? CAPABILITY_KINDS.length : items.length;
    const active = current !== null && current.query === trigger.query && current.active < count ? current.active : 0;
    return { trigger, level, active, count, items, status, error };
  });
  protected readonly activeDescendant = computed(() => {
    const open = this.openPicker();
    return open !== null && open.count > 0 ? `${this.pickerId}-option-${open.active}` : null;
  });
  protected readonly selectionError = computed(() => {
    const key = this.selectionErrorKey();
    return key ? this.i18n.t(SELECTION_ERRORS[key]) : null;
  });
  protected readonly hasChips = computed(() => selectionCount(this.selections()) > 0);
  /** The selected Skills, then the selected connectors, as removable chips. */
  protected readonly chips = computed(() => {
    const { skills, mcp } = this.selections();
    return [
      ...skills.map((skill) => {
        const label = skill.label || skill.name;
        const removeLabel = this.i18n.t('picker.removeSkill', { label });
        return { kind: 'skill' as const, identity: skill.name, label, removeLabel };
      }),
      ...mcp.map((connector) => {
        const label = connector.label || connector.server;
        const removeLabel = this.i18n.t('picker.removeMcp', { label });
        return { kind: 'mcp' as const, identity: connector.server, label, removeLabel };
      }),
    ];
  });

  protected readonly selectedKey = computed(() => {
    const selection = this.selection();
    return selection ? selectionKey(selection) : null;
  });
  protected readonly hasModels = computed(() => this.modelGroups().some((group) => group.models.length > 0));
  protected readonly sendEnabled = computed(() =>
    canSend({
      text: this.text(),
      chatReady: this.chatReady(),
      hasModel: this.selection() !== null,
      modelsLoading: this.modelsLoading(),
      generating: this.generating(),
    }) && !this.uploads.uploading(),
  );
  /** while an answer streams, Enter (or Queue) queues the message: the same rules as Send, minus the running turn */
  protected readonly queueEnabled = computed(
    () =>
      this.generating() &&
      !this.uploads.uploading() &&
      canSend({
        text: this.text(),
        chatReady: this.chatReady(),
        hasModel: this.selection() !== null,
        modelsLoading: this.modelsLoading(),
        generating: false,
      }),
  );
  protected readonly providerLine = computed(() =>
    this.providerErrors()
      .map(({ provider, error }) => `${this.i18n.t(PROVIDER_LABELS[provider])}: ${error}`)
      .join('; '),
  );

  constructor() {
    // the unsent files belong to the chat they were uploaded for
    let uploadsFor: string | null = null;
    effect(() => {
      const chatId = this.chatId();
      if (chatId !== uploadsFor) untracked(() => this.uploads.discard());
      uploadsFor = chatId;
    });
    // switching chats puts the cursor back into the composer
    let focusedFor: string | null = null;
    afterRenderEffect({
      write: () => {
        const chatId = this.chatId();
        if (chatId === null || chatId === focusedFor) return;
        const first = focusedFor === null;
        focusedFor = chatId;
        if (!first) this.textarea().nativeElement.focus();
      },
    });
  }

  protected providerLabel(provider: LlmProvider): string {
    return this.i18n.t(PROVIDER_LABELS[provider]);
  }

  protected optionKey(provider: LlmProvider, model: string): string {
    return selectionKey({ provider, model });
  }

  protected onModelChange(change: MatSelectChange<string>): void {
    const selection = parseStoredSelection(change.value);
    if (selection) this.selectModel.emit(selection);
  }

  // ---- text and caret ----------------------------------------------------------------------------------

  protected onInput(event: Event): void {
    const element = event.target as HTMLTextAreaElement;
    this.text.set(element.value);
    this.moveCaret(element.selectionStart ?? element.value.length);
  }

  /** Clicks and caret keys may move the caret into or out of a mention. */
  protected onCaretMaybeMoved(): void {
    const element = this.textarea().nativeElement;
    if (element.value !== this.text()) return;
    this.moveCaret(element.selectionStart ?? element.value.length);
  }

  private moveCaret(caret: number): void {
    this.caret.set(caret);
    // a dismissal or a navigation state lasts only as long as its `@`
    const trigger = this.trigger();
    if (trigger === null || trigger.start !== this.suppressedStart()) this.suppressedStart.set(null);
    if (trigger === null || trigger.start !== this.pickerState()?.start) this.pickerState.set(null);
  }

  private replaceText(text: string, caret: number): void {
    const element = this.textarea().nativeElement;
    element.value = text;
    element.setSelectionRange(caret, caret);
    this.text.set(text);
    this.moveCaret(caret);
    afterNextRender(
      () => {
        if (element.value === text) element.setSelectionRange(caret, caret);
        this.autosize().resizeToFitContent(true);
      },
      { injector: this.injector },
    );
  }

  // ---- keys ----------------------------------------------------------------------------------------------

  protected onKeydown(event: KeyboardEvent): void {
    if (event.isComposing || event.keyCode === 229) return;
    const open = this.openPicker();
    if (open !== null && !(event.key === 'Enter' && event.shiftKey)) {
      const action = pickerKeyAction(
        { level: open.level, active: open.active, count: open.count, query: open.trigger.query },
        event.key,
      );
      if (action.kind !== 'none') {
        event.preventDefault();
        this.applyPickerAction(open, action);
        return;
      }
    }
    if (isRecallKey(event, this.text())) {
      event.preventDefault();
      this.recall.emit();
      return;
    }
    if (!isSendKey(event)) return;
    event.preventDefault();
    this.submit();
  }

  private applyPickerAction(open: OpenPicker, action: PickerKeyAction): void {
    switch (action.kind) {
      case 'move':
        this.onHover(action.active);
        return;
      case 'choose':
        if (open.level === 'category') this.enterLevel(CAPABILITY_KINDS[action.index]);
        else if (open.items[action.index]) this.choose(open.items[action.index]);
        return;
      case 'close':
        this.suppressedStart.set(open.trigger.start);
        return;
      case 'back':
        this.goBack();
        return;
      case 'none':
        return;
    }
  }

  // ---- picker ----------------------------------------------------------------------------------------------

  protected onHover(index: number): void {
    const open = this.openPicker();
    if (open === null) return;
    this.pickerState.set({ start: open.trigger.start, level: open.level, active: index, query: open.trigger.query });
  }

  protected enterLevel(kind: CapabilityKind): void {
    const open = this.openPicker();
    if (open === null) return;
    this.pickerState.set({ start: open.trigger.start, level: kind, active: 0, query: open.trigger.query });
    void this.catalog.load(kind);
  }

  protected goBack(): void {
    const open = this.openPicker();
    if (open === null || open.level === 'category') return;
    this.pickerState.set({
      start: open.trigger.start,
      level: 'category',
      active: CAPABILITY_KINDS.indexOf(open.level),
      query: open.trigger.query,
    });
  }

  protected retry(): void {
    const open = this.openPicker();
    if (open !== null && open.level !== 'category') void this.catalog.load(open.level);
  }

  /** Adds the chip and removes `@query` from the text. */
  protected choose(item: CapabilityItem): void {
    const trigger = this.trigger();
    if (trigger === null) return;
    const result = addSelection(this.selections(), item);
    if (result.ok) {
      this.selections.set(result.selections);
      this.selectionErrorKey.set(null);
    } else {
      this.selectionErrorKey.set(result.error);
    }
    const edit = removeMention(this.text(), trigger, this.caret());
    this.replaceText(edit.text, edit.caret);
    this.textarea().nativeElement.focus();
  }

  protected removeChip(kind: CapabilityKind, identity: string): void {
    this.selections.set(removeSelection(this.selections(), kind, identity));
    this.selectionErrorKey.set(null);
    this.textarea().nativeElement.focus();
  }

  /** A press outside the composer dismisses the picker for this `@`. */
  protected onDocumentPointerDown(event: Event): void {
    const open = this.openPicker();
    if (open === null) return;
    const target = event.target;
    if (target instanceof Node && this.host.nativeElement.contains(target)) return;
    this.suppressedStart.set(open.trigger.start);
  }

  // ---- send ------------------------------------------------------------------------------------------------

  protected submit(): void {
    if (!this.sendEnabled() && !this.queueEnabled()) return;
    this.send.emit({ text: this.text(), selections: this.selections(), attachments: this.uploads.receipts() });
  }

  // ---- attachments -------------------------------------------------------------------------------------

  protected attach(files: readonly File[]): void {
    const chatId = this.chatId();
    if (chatId === null || files.length === 0) return;
    this.uploads.add(chatId, files);
  }

  protected onPickFiles(event: Event): void {
    const element = event.target as HTMLInputElement;
    this.attach(filesOf(element.files, pastedName));
    // the same file can be picked again
    element.value = '';
  }

  /** A paste with files (a screenshot, copied files) attaches them; a text paste stays a text paste. */
  protected onPaste(event: ClipboardEvent): void {
    const files = filesOf(event.clipboardData?.files, pastedName);
    if (files.length === 0) return;
    event.preventDefault();
    this.attach(files);
  }

  protected onDragOver(event: DragEvent): void {
    if (!event.dataTransfer?.types.includes('Files')) return;
    event.preventDefault();
    this.dragging.set(true);
  }

  protected onDragLeave(): void {
    this.dragging.set(false);
  }

  protected onDrop(event: DragEvent): void {
    this.dragging.set(false);
    const files = filesOf(event.dataTransfer?.files, pastedName);
    if (files.length === 0) return;
    event.preventDefault();
    this.attach(files);
  }

  /** Called by the page after a successful send: the text and the chips are gone. */
  clear(): void {
    this.text.set('');
    this.caret.set(0);
    this.selections.set(NO_SELECTIONS);
    this.uploads.clear();
    this.selectionErrorKey.set(null);
    this.pickerState.set(null);
    this.suppressedStart.set(null);
    this.textarea().nativeElement.value = '';
    this.autosize().resizeToFitContent(true);
  }

  focus(): void {
    this.textarea().nativeElement.focus();
  }

  /** Puts text in the composer for editing (↑ in an empty composer), the cursor at its end. */
  setText(text: string): void {
    this.replaceText(text, text.length);
    this.autosize().resizeToFitContent(true);
    this.focus();
  }
}
