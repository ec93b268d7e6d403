import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSlideToggleModule, type MatSlideToggleChange } from '@angular/material/slide-toggle';
import { MatTabsModule } from '@angular/material/tabs';
import { MatTooltipModule } from '@angular/material/tooltip';

import { I18n } from '../../core/i18n/i18n';
import { FieldError } from '../../shared/field-error';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { BackgroundModelPicker } from '../../memory/background-model-picker/background-model-picker';
import { ImageModelsPanel } from '../image-models/image-models-panel';
import { storedAnthropicKeyKept, storedKeyKept, type FieldName, type SettingsTab } from '../llm-settings-form';
import { LlmSettingsStore } from '../llm-settings-store';

const TABS: readonly SettingsTab[] = ['openai_compatible', 'ollama', 'anthropic'];

/** LLM settings: OpenAI-compatible, Ollama and Anthropic tabs, test connection, save. */
@Component({
  selector: 'cc-llm-settings-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButtonModule,
    MatFormFieldModule,
    MatInputModule,
    MatProgressSpinnerModule,
    MatSlideToggleModule,
    MatTabsModule,
    MatTooltipModule,
    FieldError,
    Icon,
    PageHeader,
    BackgroundModelPicker,
    ImageModelsPanel,
  ],
  providers: [LlmSettingsStore],
  templateUrl: './llm-settings-page.html',
  styleUrl: './llm-settings-page.scss',
})
export class LlmSettingsPage {
  protected readonly store = inject(LlmSettingsStore);
  protected readonly i18n = inject(I18n);
  private readonly dialog = inject(MatDialog);

  protected readonly showKey = signal(false);
  protected readonly showAnthropicKey = signal(false);
  protected readonly anthropicKeyPlaceholder = computed(() =>
    storedAnthropicKeyKept(this.store.draft()) ? this.i18n.t('settings.keepKey') : 'sk-ant-…',
  );
  protected readonly tabIndex = computed(() => TABS.indexOf(this.store.draft().tab));
  /** "leave blank to keep" only while a blank key really keeps the stored one (same origin, not being cleared) */
  protected readonly keyPlaceholder = computed(() =>
    storedKeyKept(this.store.draft()) ? this.i18n.t('settings.keepKey') : '',
  );

  constructor() {
    void this.store.load();
  }

  protected onTab(index: number): void {
    this.store.setTab(TABS[index] ?? 'openai_compatible');
  }

  protected onInput(field: FieldName, event: Event): void {
    this.store.update(field, (event.target as HTMLInputElement).value);
  }

  protected async onClearKey(change: MatSlideToggleChange, provider: 'openai_compatible' | 'anthropic' = 'openai_compatible'): Promise<void> {
    if (!change.checked) {
      this.store.setClearKey(false, provider);
      return;
    }
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('settings.clearKeyTitle'),
      body: this.i18n.t('settings.clearKeyBody'),
      confirm: this.i18n.t('settings.clearKeyConfirm'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) this.store.setClearKey(true, provider);
    else change.source.checked = false;
  }

  protected async onSave(): Promise<void> {
    if (await this.store.save()) {
      this.showKey.set(false);
      this.showAnthropicKey.set(false);
    }
  }
}
