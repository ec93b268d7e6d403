/**
 * One answer streamed into a channel conversation (openspec channels "Requirement: Streaming answers"): the first text
 * sends a message (after FIRST_SEND_DELAY_MS, or at once when the answer is complete), later text edits it, at most once per `minIntervalMs` (Telegram allows about one edit a second per
 * chat); the final flush writes the whole answer. The rendering is split by the adapter into messages within the
 * platform's limit; a message whose rendering changed is edited, a new one is sent. Flushes run one after another; a
 * failed send or edit is logged and the next flush tries again with the whole text.
 */
import { Logger } from '@nestjs/common';
import { errorType, formatEvent } from '../common/log-format';
import type { ChannelAdapter } from './channel-adapter';

/** the shortest time between two edits of one answer */
export const DEFAULT_EDIT_INTERVAL_MS = 1_000;
/**
 * the first text waits this long before it is sent: a quick answer then goes out as one message instead of a send and
 * an edit (one Bot API call less; `npm run bench -- channels`)
 */
export const FIRST_SEND_DELAY_MS = 300;

export class AnswerStream {
  private readonly logger = new Logger('ChannelService');
  private text = '';
  private readonly messageIds: string[] = [];
  private readonly shown: string[] = [];
  private lastFlush = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** no more delivery (the sender was revoked) */
  muted = false;

  constructor(
    private readonly adapter: ChannelAdapter,
    private readonly conversationId: string,
    private readonly minIntervalMs = DEFAULT_EDIT_INTERVAL_MS,
  ) {}

  get answered(): boolean {
    return this.text.trim() !== '';
  }

  append(text: string): void {
    if (this.closed || text === '') return;
    this.text += text;
    if (this.timer) return;
    const wait = this.lastFlush === 0 ? FIRST_SEND_DELAY_MS : Math.max(0, this.lastFlush + this.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.enqueueFlush();
    }, wait);
    this.timer.unref();
  }

  /** The final flush: the whole answer, plus `footer` (e.g. "stopped") on its own paragraph. Resolves once delivered. */
  finish(footer?: string): Promise<void> {
    this.stopTimers();
    if (footer) this.text = this.text.trim() === '' ? footer : `${this.text}\n\n${footer}`;
    this.closed = true;
    return this.enqueueFlush();
  }

  /** Stops the stream without sending anything more. */
  mute(): void {
    this.muted = true;
    this.closed = true;
    this.stopTimers();
  }

  private stopTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private enqueueFlush(): Promise<void> {
    this.chain = this.chain.then(() => this.flush());
    return this.chain;
  }

  private async flush(): Promise<void> {
    if (this.muted) return;
    this.lastFlush = Date.now();
    const messages = this.adapter.render(this.text);
    try {
      for (const [index, rendered] of messages.entries()) {
        if (this.muted) return;
        const id = this.messageIds[index];
        if (id === undefined) {
          this.messageIds.push(await this.adapter.sendMessage(this.conversationId, rendered));
          this.shown.push(rendered);
        } else if (this.shown[index] !== rendered) {
          try {
            await this.adapter.editMessage(this.conversationId, id, rendered);
          } catch (error) {
            // the message may be gone (deleted by the user): the text goes out as a new message instead
            this.logger.warn(formatEvent('channel.edit.failed', { channel: this.adapter.kind, error_type: errorType(error) }));
            this.messageIds[index] = await this.adapter.sendMessage(this.conversationId, rendered);
          }
          this.shown[index] = rendered;
        }
      }
    } catch (error) {
      this.logger.warn(formatEvent('channel.delivery.failed', { channel: this.adapter.kind, error_type: errorType(error) }));
    } finally {
      this.lastFlush = Date.now();
    }
  }
}
