import { CdkTextareaAutosize, TextFieldModule } from '@angular/cdk/text-field';
import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  computed,
  inject,
  input,
  output,
  signal,
  viewChild,
} from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSelectModule, type MatSelectChange } from '@angular/material/select';
import { MatTooltipModule } from '@angular/material/tooltip';
import type { LlmProvider, LlmSelection } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { canSend, isSendKey } from '../composer-rules';
import { parseStoredSelection, selectionKey, type ModelGroup } from '../model-selection';

const PROVIDER_LABELS: Record<LlmProvider, MessageKey> = {
  openai_compatible: 'provider.openai_compatible',
  ollama: 'provider.ollama',
};

/**
 * The message composer: auto-growing textarea (Enter sends, Shift+Enter newline), model picker grouped by
 * provider, refresh, and Send — or Stop while the open chat is generating.
 */
@Component({
  selector: 'cc-composer',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [TextFieldModule, MatButtonModule, MatSelectModule, MatTooltipModule, MatProgressSpinnerModule, Icon],
  templateUrl: './composer.html',
  styleUrl: './composer.scss',
})
export class Composer {
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

  readonly send = output<string>();
  readonly stop = output<void>();
  readonly refreshModels = output<void>();
  readonly selectModel = output<LlmSelection>();

  protected readonly i18n = inject(I18n);
  protected readonly text = signal('');
  private readonly textarea = viewChild.required<ElementRef<HTMLTextAreaElement>>('textarea');
  private readonly autosize = viewChild.required(CdkTextareaAutosize);

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
    }),
  );
  protected readonly providerLine = computed(() =>
    this.providerErrors()
      .map(({ provider, error }) => `${this.i18n.t(PROVIDER_LABELS[provider])}: ${error}`)
      .join('; '),
  );

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

  protected onInput(event: Event): void {
    this.text.set((event.target as HTMLTextAreaElement).value);
  }

  protected onKeydown(event: KeyboardEvent): void {
    if (!isSendKey(event)) return;
    event.preventDefault();
    this.submit();
  }

  protected submit(): void {
    if (!this.sendEnabled()) return;
    this.send.emit(this.text());
  }

  /** Called by the page after a successful send. */
  clear(): void {
    this.text.set('');
    this.textarea().nativeElement.value = '';
    this.autosize().resizeToFitContent(true);
  }

  focus(): void {
    this.textarea().nativeElement.focus();
  }
}
