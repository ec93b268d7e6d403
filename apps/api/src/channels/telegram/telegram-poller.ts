/**
 * Long polling of the Bot API (openspec channels "Requirement: Restart-safe polling"): `getMe`, then `getUpdates`
 * from the persisted offset, one update after another; the offset after each handled update is written to
 * `<dataDir>/channels/telegram/state.json` before the next one is handled, so after a restart nothing is answered twice
 * and nothing is skipped. A 429 is retried after Telegram's `retry_after` (grammY's auto-retry), an outage (network
 * error, 5xx) backs off from 1 s to 60 s and reconnects by itself (status `connecting` with the reason), and a token
 * Telegram refuses (401, or 404 for a malformed one) stops the polling with status `error`: no crash loop.
 */
import { Logger } from '@nestjs/common';
import { GrammyError, HttpError, type Api } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import { isRecord } from '@cashcode/contracts';
import { errorType, formatEvent } from '../../common/log-format';
import { JsonStateFile } from '../json-state-file';

/** what the poller asks Telegram for: new messages and button presses (no edited messages, no channel posts) */
export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;
const POLL_TIMEOUT_SEC = 25;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

export type PollerState =
  | { status: 'connecting'; error: string | null }
  | { status: 'connected'; me: UserFromGetMe }
  | { status: 'error'; error: string }
  | { status: 'stopped' };

export interface PollerHooks {
  /** getMe answered: the channel can deliver from now on */
  connected(me: UserFromGetMe): Promise<void>;
  /** one update; a rejection is logged and the update counts as handled */
  handle(update: Update): Promise<void>;
  state(state: PollerState): void;
}

/** Why a refused token stops polling, in words for the settings page. */
function tokenRefusal(error: unknown): string | null {
  if (!(error instanceof GrammyError)) return null;
  if (error.error_code === 401) return 'Telegram refused the bot token (401 Unauthorized): it is wrong or was revoked. Enter a new token from @BotFather.';
  if (error.error_code === 404) return 'Telegram does not know this bot token (404 Not Found). Enter the token @BotFather gave you.';
  return null;
}

function outageReason(error: unknown): string {
  if (error instanceof GrammyError) return `The Bot API answered ${error.error_code}: ${error.description.slice(0, 200)}`;
  if (error instanceof HttpError) return 'The Bot API could not be reached (network error).';
  return 'The Bot API request failed.';
}

export class TelegramPoller {
  private readonly logger = new Logger('TelegramChannel');
  private readonly controller = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly offsetFile: JsonStateFile<{ offset: number }>;

  constructor(
    private readonly api: Api,
    statePath: string,
    private readonly hooks: PollerHooks,
  ) {
    this.offsetFile = new JsonStateFile(statePath, () => ({ offset: 0 }), (raw) => {
      if (!isRecord(raw) || typeof raw['offset'] !== 'number' || !Number.isSafeInteger(raw['offset'])) throw new Error('bad state');
      return { offset: raw['offset'] };
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops polling and waits for the update being handled (the long poll itself is aborted). */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal;
    let backoff = FIRST_BACKOFF_MS;
    let me: UserFromGetMe | null = null;
    let recovering = false;
    let webhookDropped = false;
    this.hooks.state({ status: 'connecting', error: null });
    while (!this.stopped) {
      try {
        // at the start, and after an outage: a quick getMe says "connected" before the next long poll waits
        if (!me || recovering) {
          const fresh = await this.api.getMe(grammySignal(signal));
          if (!me) {
            me = fresh;
            await this.hooks.connected(me);
          }
          recovering = false;
          backoff = FIRST_BACKOFF_MS;
          this.hooks.state({ status: 'connected', me });
          this.logger.log(formatEvent('telegram.connected', { bot_id: me.id }));
        }
        const { offset } = await this.offsetFile.read();
        const updates = await this.api.getUpdates(
          { offset, timeout: POLL_TIMEOUT_SEC, allowed_updates: [...ALLOWED_UPDATES] },
          grammySignal(signal),
        );
        for (const update of updates) {
          if (this.stopped) return;
          if (update.update_id < offset) continue;
          try {
            await this.hooks.handle(update);
          } catch (error) {
            this.logger.error(formatEvent('telegram.update.failed', { update_id: update.update_id, error_type: errorType(error) }));
          }
          await this.offsetFile.update((draft) => {
            draft.offset = Math.max(draft.offset, update.update_id + 1);
          });
        }
      } catch (error) {
        if (this.stopped) return;
        // a webhook left set (by another program, or an earlier setup) blocks getUpdates: long polling replaces it
        if (error instanceof GrammyError && error.error_code === 409 && /webhook/i.test(error.description) && !webhookDropped) {
          webhookDropped = true;
          this.logger.warn(formatEvent('telegram.webhook.deleted', {}));
          await this.api.deleteWebhook({ drop_pending_updates: false }, grammySignal(signal)).catch(() => undefined);
          continue;
        }
        const refusal = tokenRefusal(error);
        if (refusal) {
          this.logger.warn(formatEvent('telegram.token.refused', { error_code: (error as GrammyError).error_code }));
          this.hooks.state({ status: 'error', error: refusal });
          return;
        }
        const reason = `${outageReason(error)} Retrying in ${Math.round(backoff / 1000)} s.`;
        this.logger.warn(formatEvent('telegram.poll.failed', { error_type: errorType(error), retry_ms: backoff }));
        this.hooks.state({ status: 'connecting', error: reason });
        recovering = true;
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }
}

/** grammY types its signal parameter with the abort-controller package's class; Node's own signal is what it gets. */
function grammySignal(signal: AbortSignal): Parameters<Api['getMe']>[0] {
  return signal as unknown as Parameters<Api['getMe']>[0];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
