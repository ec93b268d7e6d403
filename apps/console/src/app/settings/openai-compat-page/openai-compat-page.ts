import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSlideToggleModule, type MatSlideToggleChange } from '@angular/material/slide-toggle';
import { MatTooltipModule } from '@angular/material/tooltip';
import type { OpenAiCompatKey, OpenAiCompatSettings, UpdateOpenAiCompatSettingsRequest } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { OpenAiCompatApi } from '../openai-compat-api';

/** Settings > OpenAI-compatible API: the `/v1` switch, its options and the access keys (a new key is shown once). */
@Component({
  selector: 'cc-openai-compat-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButtonModule,
    MatFormFieldModule,
    MatInputModule,
    MatProgressSpinnerModule,
    MatSlideToggleModule,
    MatTooltipModule,
    Icon,
    PageHeader,
  ],
  templateUrl: './openai-compat-page.html',
  styleUrl: './openai-compat-page.scss',
})
export class OpenAiCompatPage {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(OpenAiCompatApi);
  private readonly dialog = inject(MatDialog);
  private readonly document = inject(DOCUMENT);

  protected readonly settings = signal<OpenAiCompatSettings | null>(null);
  protected readonly loadError = signal<string | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly busy = signal(false);
  protected readonly keyName = signal('');
  /** the secret of the key just created: shown until dismissed, never again */
  protected readonly created = signal<{ name: string; secret: string } | null>(null);
  protected readonly copied = signal(false);
  protected readonly baseUrl = computed(() => `${this.document.location.origin}/v1`);

  constructor() {
    void this.load();
  }

  protected async load(): Promise<void> {
    this.loadError.set(null);
    try {
      this.settings.set(await this.api.get());
    } catch (error) {
      this.loadError.set(errorMessage(error));
    }
  }

  protected onToggle(field: 'enabled' | 'tool_progress' | 'map_user_to_chat', change: MatSlideToggleChange): void {
    void this.save({ [field]: change.checked }, () => (change.source.checked = !change.checked));
  }

  protected onKeyName(event: Event): void {
    this.keyName.set((event.target as HTMLInputElement).value);
  }

  protected async onCreate(): Promise<void> {
    const name = this.keyName().trim();
    if (name === '' || this.busy()) return;
    await this.run(async () => {
      const created = await this.api.createKey(name);
      this.created.set({ name: created.key.name, secret: created.secret });
      this.copied.set(false);
      this.keyName.set('');
      this.settings.set(await this.api.get());
    });
  }

  protected async onCopy(secret: string): Promise<void> {
    try {
      await this.document.defaultView?.navigator.clipboard.writeText(secret);
      this.copied.set(true);
    } catch {
      this.copied.set(false);
    }
  }

  protected async onRevoke(key: OpenAiCompatKey): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('openaiCompat.revokeTitle', { name: key.name }),
      body: this.i18n.t('openaiCompat.revokeBody'),
      confirm: this.i18n.t('openaiCompat.revoke'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (!confirmed) return;
    await this.run(async () => {
      await this.api.revokeKey(key.id);
      this.settings.set(await this.api.get());
    });
  }

  private async save(request: UpdateOpenAiCompatSettingsRequest, undo: () => void): Promise<void> {
    const ok = await this.run(async () => this.settings.set(await this.api.update(request)));
    if (!ok) undo();
  }

  private async run(task: () => Promise<void>): Promise<boolean> {
    this.busy.set(true);
    this.error.set(null);
    try {
      await task();
      return true;
    } catch (error) {
      this.error.set(errorMessage(error));
      return false;
    } finally {
      this.busy.set(false);
    }
  }
}
