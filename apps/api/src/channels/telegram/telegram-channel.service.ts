/**
 * The Telegram channel's life (openspec channels "Requirement: Telegram settings"): its settings (token stored 0600
 * in the config directory, bound to the Bot API origin, never returned), the poller started while it is enabled with
 * a usable token and restarted when the settings change, its status (disabled / connecting / connected / error with
 * the reason), and the pairing list. Updates go to the channel framework (channel-turns.service.ts) through the
 * adapter (telegram-adapter.ts); grammY's client talks to CASHCODE_TELEGRAM_API_ROOT with the auto-retry plugin, so a
 * 429 waits for Telegram's `retry_after`.
 */
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { join } from 'node:path';
import { Api } from 'grammy';
import { autoRetry } from '@grammyjs/auto-retry';
import type { Update } from 'grammy/types';
import type { ChannelStatus, LlmProvider, TelegramApprovedSender, TelegramChannelSettings, TelegramPairingsResponse, UpdateTelegramChannelRequest } from '@cashcode/contracts';
import { registerSecretValue, unregisterSecretValue } from '../../common/redact';
import { urlSecretBinding } from '../../common/secret-binding';
import { errorType, formatEvent } from '../../common/log-format';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ChannelTurnsService } from '../channel-turns.service';
import { ChannelError } from '../channels.errors';
import { TelegramAdapter } from './telegram-adapter';
import { TelegramPoller, type PollerState } from './telegram-poller';
import { TELEGRAM_TOKEN_PATTERN, TelegramSettingsStore, tokenHint, type StoredTelegramSettings } from './telegram-settings.store';

/** retries of one Bot API call after a 429 or a 5xx before it fails (the poller then backs off) */
const MAX_RETRY_ATTEMPTS = 3;
/** a 429 asking to wait longer than this fails the call instead (the poller backs off) */
const MAX_RETRY_AFTER_SEC = 120;

@Injectable()
export class TelegramChannelService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('TelegramChannel');
  private readonly store: TelegramSettingsStore;
  private readonly apiRoot: string;
  private poller: TelegramPoller | null = null;
  private adapter: TelegramAdapter | null = null;
  private state: PollerState = { status: 'stopped' };
  private settings: StoredTelegramSettings | null = null;
  /** settings changes and restarts run one after another */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly channels: ChannelTurnsService,
  ) {
    this.store = new TelegramSettingsStore(config.configDir);
    this.apiRoot = config.telegramApiRoot;
  }

  async onModuleInit(): Promise<void> {
    try {
      this.settings = await this.store.read();
      registerSecretValue(this.settings.token);
    } catch (error) {
      this.logger.error(formatEvent('telegram.settings.unreadable', { error_type: errorType(error) }));
      return;
    }
    // the poller starts off the boot path: the server is up even when the Bot API is not
    void this.serial(() => this.restart());
  }

  async onModuleDestroy(): Promise<void> {
    await this.serial(() => this.stopPolling());
  }

  async getSettings(): Promise<TelegramChannelSettings> {
    const settings = this.settings ?? (await this.store.read());
    return this.view(settings);
  }

  /** Status of the list of channels. */
  async listEntry(): Promise<{ kind: 'telegram'; enabled: boolean; status: ChannelStatus }> {
    const view = await this.getSettings();
    return { kind: 'telegram', enabled: view.enabled, status: view.status };
  }

  update(body: UpdateTelegramChannelRequest): Promise<TelegramChannelSettings> {
    return this.serial(async () => {
      const token = body.token?.trim();
      if (token !== undefined && token !== '' && !TELEGRAM_TOKEN_PATTERN.test(token)) {
        throw new ChannelError('validation', 'token is not a Telegram bot token (digits, a colon, then the secret from @BotFather)', { field: 'token' });
      }
      const origin = urlSecretBinding(this.apiRoot) ?? '';
      const previous = this.settings?.token ?? '';
      this.settings = await this.store.update((draft) => {
        if (body.enabled !== undefined) draft.enabled = body.enabled;
        if (body.groups_enabled !== undefined) draft.groups_enabled = body.groups_enabled;
        if (body.model !== undefined) draft.model = body.model;
        if (token !== undefined) {
          draft.token = token;
          draft.token_origin = token === '' ? '' : origin;
        }
      });
      if (previous !== this.settings.token) {
        unregisterSecretValue(previous);
        registerSecretValue(this.settings.token);
      }
      this.logger.log(formatEvent('telegram.settings.updated', { enabled: this.settings.enabled, token_set: this.settings.token !== '' }));
      await this.restart();
      return this.view(this.settings);
    });
  }

  /** The adapter while the bot is connected (null otherwise): what deliveries and owner notices are sent through. */
  connectedAdapter(): TelegramAdapter | null {
    return this.adapter;
  }

  async pairings(): Promise<TelegramPairingsResponse> {
    return this.channels.pairings('telegram').list();
  }

  async approve(code: string): Promise<TelegramApprovedSender> {
    const sender = await this.channels.pairings('telegram').approve(code);
    if (!sender) throw new ChannelError('not_found', 'No pending pairing has this code (it may have expired).');
    this.logger.log(formatEvent('telegram.pairing.approved', { kind: sender.kind }));
    if (this.adapter) {
      const to = sender.sender_id;
      const text = sender.kind === 'user' ? 'You are paired: write to me any time.' : 'This group is paired: mention me to talk to me.';
      await this.adapter.sendMessage(to, text).catch(() => undefined);
    }
    return sender;
  }

  async revoke(senderId: string): Promise<void> {
    if (!(await this.channels.pairings('telegram').revoke(senderId))) {
      throw new ChannelError('not_found', 'No approved sender has this id.');
    }
    this.logger.log(formatEvent('telegram.sender.revoked', {}));
    await this.channels.revoked('telegram', senderId);
  }

  private view(settings: StoredTelegramSettings): TelegramChannelSettings {
    const state = this.state;
    const usable = this.usableToken(settings);
    let status: ChannelStatus = 'disabled';
    let error: string | null = null;
    if (settings.enabled) {
      if (settings.token === '') {
        status = 'error';
        error = 'No bot token is set.';
      } else if (!usable) {
        status = 'error';
        error = `The stored token was entered for another Bot API server; enter it again for ${this.apiRoot}.`;
      } else if (state.status === 'connected') status = 'connected';
      else if (state.status === 'error') {
        status = 'error';
        error = state.error;
      } else {
        status = 'connecting';
        error = state.status === 'connecting' ? state.error : null;
      }
    }
    return {
      enabled: settings.enabled,
      token_set: settings.token !== '',
      token_hint: tokenHint(settings.token),
      api_root: this.apiRoot,
      groups_enabled: settings.groups_enabled,
      status,
      error,
      bot_username: this.state.status === 'connected' ? (this.state.me.username ?? null) : null,
      model: settings.model ? { ...settings.model } : null,
    };
  }

  private usableToken(settings: StoredTelegramSettings): boolean {
    const origin = urlSecretBinding(this.apiRoot);
    return settings.token !== '' && origin !== null && settings.token_origin === origin;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async stopPolling(): Promise<void> {
    const poller = this.poller;
    this.poller = null;
    this.adapter = null;
    this.channels.unregister('telegram');
    await poller?.stop();
    this.state = { status: 'stopped' };
  }

  private async restart(): Promise<void> {
    await this.stopPolling();
    const settings = this.settings;
    if (!settings || !settings.enabled || !this.usableToken(settings)) return;
    // sends wait out a 429 and retry a 5xx a few times; the poll leaves outages to the poller's own backoff and status
    const api = new Api(settings.token, { apiRoot: this.apiRoot });
    api.config.use(autoRetry({ maxRetryAttempts: MAX_RETRY_ATTEMPTS, maxDelaySeconds: MAX_RETRY_AFTER_SEC, rethrowHttpErrors: true }));
    const pollApi = new Api(settings.token, { apiRoot: this.apiRoot });
    pollApi.config.use(
      autoRetry({ maxRetryAttempts: MAX_RETRY_ATTEMPTS, maxDelaySeconds: MAX_RETRY_AFTER_SEC, rethrowHttpErrors: true, rethrowInternalServerErrors: true }),
    );
    const fileBase = `${this.apiRoot}/file/bot${settings.token}`;
    const statePath = join(this.config.dataDir, 'channels', 'telegram', 'state.json');
    const poller: TelegramPoller = new TelegramPoller(pollApi, statePath, {
      connected: async (me) => {
        if (this.poller !== poller) return;
        const adapter = new TelegramAdapter(api, me, fileBase);
        this.adapter = adapter;
        await this.channels.register(adapter, {
          chatPrefix: `tg-${me.id}`,
          groupsEnabled: () => this.settings?.groups_enabled === true,
          model: () => (this.settings?.model ? { provider: this.settings.model.provider as LlmProvider, model: this.settings.model.model } : null),
        });
      },
      handle: (update) => this.handle(update),
      state: (state) => {
        if (this.poller === poller) this.state = state;
      },
    });
    this.poller = poller;
    poller.start();
  }

  private async handle(update: Update): Promise<void> {
    const adapter = this.adapter;
    if (!adapter) return;
    if (update.callback_query) {
      const action = adapter.inboundAction(update.callback_query);
      if (action) await this.channels.onAction(adapter, action);
      return;
    }
    const message = adapter.inboundMessage(update);
    if (message) await this.channels.onMessage(adapter, message);
  }
}
