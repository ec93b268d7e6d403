import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import type { ChannelListEntry } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { ChannelsApi } from '../channels-api';
import { TelegramCard } from '../telegram-card/telegram-card';

/** Settings → Channels (`/settings/channels`): one card per channel the server offers (`GET /api/channels`). */
@Component({
  selector: 'cc-channels-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, Icon, PageHeader, TelegramCard],
  templateUrl: './channels-page.html',
  styleUrl: './channels-page.scss',
})
export class ChannelsPage {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(ChannelsApi);

  protected readonly channels = signal<ChannelListEntry[] | null>(null);
  protected readonly loadError = signal<string | null>(null);

  constructor() {
    void this.load();
  }

  protected async load(): Promise<void> {
    this.loadError.set(null);
    try {
      this.channels.set((await this.api.list()).channels);
    } catch (error) {
      this.loadError.set(errorMessage(error));
    }
  }
}
