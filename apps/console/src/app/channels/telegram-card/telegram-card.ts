import { ChangeDetectionStrategy, Component, DestroyRef, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSlideToggleModule, type MatSlideToggleChange } from '@angular/material/slide-toggle';
import type { ChannelModelSelection, ChannelStatus, TelegramApprovedSender, TelegramChatType } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../shared/icon/icon';
import { chatTypeKey, expiryText, statusKey, statusTone } from '../channel-rules';
import { TelegramChannelStore } from '../telegram-channel-store';

/**
 * The Telegram card of Settings → Channels: the write-only bot token (its masked hint, Replace, Clear), the enabled
 * and group switches, the connection status with the bot's name or the error, the pending pairings (Approve) and the
 * approved senders (Revoke, confirmed). Polls while shown (TelegramChannelStore).
 */
@Component({
  selector: 'cc-telegram-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatFormFieldModule, MatInputModule, MatProgressSpinnerModule, MatSlideToggleModule, Icon],
  providers: [TelegramChannelStore],
  templateUrl: './telegram-card.html',
  styleUrl: './telegram-card.scss',
})
export class TelegramCard {
  protected readonly i18n = inject(I18n);
  protected readonly store = inject(TelegramChannelStore);
  private readonly dialog = inject(MatDialog);

  /** the token input is shown (no token yet, or Replace was pressed) */
  protected readonly replacing = signal(false);
  protected readonly token = signal('');
  protected readonly tokenError = signal<string | null>(null);
  protected readonly now = signal(Date.now());

  /** the model choices: the LLM settings' models, and the channel's own choice even when no longer listed */
  protected readonly modelOptions = computed(() => {
    const options = this.store.models().map((entry) => ({ provider: entry.provider as string, model: entry.id }));
    const chosen = this.store.settings()?.model;
    if (chosen && !options.some((option) => sameModel(option, chosen))) options.unshift({ ...chosen });
    return options.map((option) => ({ value: modelValue(option), label: `${option.model} (${option.provider})`, selection: option }));
  });

  constructor() {
    this.store.start();
    const timer = setInterval(() => this.now.set(Date.now()), 15_000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }

  protected statusText(status: ChannelStatus): string {
    return this.i18n.t(statusKey(status));
  }

  protected tone(status: ChannelStatus): string {
    return statusTone(status);
  }

  protected chatType(type: TelegramChatType): string {
    return this.i18n.t(chatTypeKey(type));
  }

  protected expiry(expiresAt: string): string {
    return expiryText(expiresAt, this.now(), (key, params) => this.i18n.t(key, params));
  }

  protected approvedAt(at: string): string {
    const time = Date.parse(at);
    const when = Number.isNaN(time) ? at : new Date(time).toLocaleString(this.i18n.locale());
    return this.i18n.t('channels.approvedAt', { when });
  }

  protected onTokenInput(event: Event): void {
    this.token.set((event.target as HTMLInputElement).value);
    this.tokenError.set(null);
  }

  protected startReplace(): void {
    this.replacing.set(true);
    this.token.set('');
    this.tokenError.set(null);
  }

  protected cancelReplace(): void {
    this.replacing.set(false);
    this.token.set('');
    this.tokenError.set(null);
  }

  protected async onSaveToken(): Promise<void> {
    if (this.store.busy()) return;
    const token = this.token().trim();
    if (token === '') {
      this.tokenError.set(this.i18n.t('channels.tokenRequired'));
      return;
    }
    if (await this.store.saveToken(token)) {
      this.replacing.set(false);
      this.token.set('');
    }
  }

  protected async onClearToken(): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('channels.clearTitle'),
      body: this.i18n.t('channels.clearBody'),
      confirm: this.i18n.t('channels.clearToken'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.clearToken();
  }

  protected async onToggle(field: 'enabled' | 'groups', change: MatSlideToggleChange): Promise<void> {
    const ok = field === 'enabled' ? await this.store.setEnabled(change.checked) : await this.store.setGroups(change.checked);
    if (!ok) change.source.checked = !change.checked;
  }

  protected isChosen(value: string): boolean {
    const chosen = this.store.settings()?.model;
    return chosen ? modelValue(chosen) === value : value === '';
  }

  protected async onModel(event: Event): Promise<void> {
    const select = event.target as HTMLSelectElement;
    const option = this.modelOptions().find((entry) => entry.value === select.value);
    const ok = await this.store.setModel(option ? option.selection : null);
    if (!ok) select.value = modelValue(this.store.settings()?.model ?? null);
  }

  protected async onApprove(code: string): Promise<void> {
    await this.store.approve(code);
  }

  protected async onRevoke(sender: TelegramApprovedSender): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('channels.revokeTitle', { name: sender.display_name }),
      body: this.i18n.t('channels.revokeBody'),
      confirm: this.i18n.t('channels.revoke'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.revoke(sender);
  }
}

function sameModel(a: ChannelModelSelection, b: ChannelModelSelection): boolean {
  return a.provider === b.provider && a.model === b.model;
}

/** `<provider>/<model>` (a provider name has no `/`); '' for the default */
function modelValue(selection: ChannelModelSelection | null): string {
  return selection ? `${selection.provider}/${selection.model}` : '';
}
