import { DestroyRef, Injectable, inject, signal } from '@angular/core';
import type {
  ChannelModelSelection,
  LlmModelEntry,
  TelegramApprovedSender,
  TelegramChannelSettings,
  TelegramPairingsResponse,
  UpdateTelegramChannelRequest,
} from '@cashcode/contracts';

import { ChannelsApi } from './channels-api';
import { CHANNEL_POLL_MS } from './channel-rules';
import { errorMessage } from '../core/api/api-error';

/**
 * The Telegram card's state (provided by the card, so it lives while the card is shown): the masked settings, the
 * pending pairings and approved senders, the error of the last action. While started it asks the server again every
 * CHANNEL_POLL_MS (status and pairings change on the server side: a token being checked, a sender asking for a code);
 * a refresh that started before an action finished is dropped, so it never undoes what the action showed.
 */
@Injectable()
export class TelegramChannelStore {
  private readonly api = inject(ChannelsApi);

  readonly settings = signal<TelegramChannelSettings | null>(null);
  readonly pairings = signal<TelegramPairingsResponse>({ pending: [], senders: [] });
  /** the first load failed (the card shows it with Retry) */
  readonly loadError = signal<string | null>(null);
  /** the last action failed: the problem's message */
  readonly error = signal<string | null>(null);
  readonly busy = signal(false);
  /** the models the channel may use (empty when the list could not be read) */
  readonly models = signal<LlmModelEntry[]>([]);

  private timer: ReturnType<typeof setInterval> | null = null;
  /** bumped by every action: a refresh answered for an older generation is dropped */
  private generation = 0;
  private refreshing = false;

  constructor() {
    inject(DestroyRef).onDestroy(() => this.stop());
  }

  /** Loads once, then polls until stop() (or the card goes away). */
  start(): void {
    void this.refresh(true);
    this.api.models().then(
      (response) => this.models.set(response.models),
      () => this.models.set([]),
    );
    if (this.timer === null) this.timer = setInterval(() => void this.refresh(false), CHANNEL_POLL_MS);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads the settings and the pairings. `first`: a failure is the card's load error, else it stays silent. */
  async refresh(first = false): Promise<void> {
    if (this.refreshing || this.busy()) return;
    this.refreshing = true;
    const generation = this.generation;
    try {
      const [settings, pairings] = await Promise.all([this.api.telegram(), this.api.pairings()]);
      if (generation !== this.generation) return;
      this.settings.set(settings);
      this.pairings.set(pairings);
      this.loadError.set(null);
    } catch (error) {
      if (first || this.settings() === null) this.loadError.set(errorMessage(error));
    } finally {
      this.refreshing = false;
    }
  }

  /** Saves a new token (write-only: only the masked hint comes back). */
  saveToken(token: string): Promise<boolean> {
    return this.update({ token: token.trim() });
  }

  clearToken(): Promise<boolean> {
    return this.update({ token: '' });
  }

  setEnabled(enabled: boolean): Promise<boolean> {
    return this.update({ enabled });
  }

  setGroups(groupsEnabled: boolean): Promise<boolean> {
    return this.update({ groups_enabled: groupsEnabled });
  }

  /** null: the last model a console turn used (the server's default for channels) */
  setModel(model: ChannelModelSelection | null): Promise<boolean> {
    return this.update({ model });
  }

  approve(code: string): Promise<boolean> {
    return this.run(async () => {
      await this.api.approve(code);
      this.pairings.set(await this.api.pairings());
    });
  }

  revoke(sender: TelegramApprovedSender): Promise<boolean> {
    return this.run(async () => {
      await this.api.revoke(sender.sender_id);
      this.pairings.set(await this.api.pairings());
    });
  }

  private update(request: UpdateTelegramChannelRequest): Promise<boolean> {
    return this.run(async () => this.settings.set(await this.api.updateTelegram(request)));
  }

  private async run(task: () => Promise<void>): Promise<boolean> {
    this.generation++;
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
