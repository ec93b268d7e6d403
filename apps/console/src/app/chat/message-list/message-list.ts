import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  afterRenderEffect,
  computed,
  effect,
  inject,
  input,
  signal,
  viewChild,
} from '@angular/core';
import { MatButtonModule } from '@angular/material/button';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { AttachmentReceipt, ChannelMessageSource } from '@cashcode/contracts';
import { messageSourceText } from '../../channels/channel-rules';
import { AssistantMessage } from '../assistant-message/assistant-message';
import { availableActions } from '../chat-actions-state';
import { chatTotals, formatSeconds } from '../answer-stats';
import { MessageActions } from '../message-actions/message-actions';
import { AttachmentChips } from '../attachments/attachment-chips';
import { chipOfReceipt, type AttachmentChip } from '../attachments/attachment-rules';
import type { ChatMessage, TurnWarning } from '../chat-types';
import { warningReasonKey } from './turn-warning';
import { ChatStore } from '../chat-store';
import { formatCosts, formatMoney } from '../../usage/usage-format';
import { UsageLive } from '../../usage/usage-live';

/** Distance from the bottom (px) beyond which the list stops following new content. */
export const STICK_THRESHOLD_PX = 80;

/**
 * The conversation. Follows new content to the bottom unless the reader scrolled up (more than 80 px from the
 * bottom); then a "Jump to latest" button appears.
 */
@Component({
  selector: 'cc-message-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, AssistantMessage, MessageActions, Icon, AttachmentChips],
  templateUrl: './message-list.html',
  styleUrl: './message-list.scss',
})
export class MessageList {
  readonly messages = input.required<readonly ChatMessage[]>();
  readonly chatId = input<string | null>(null);

  protected readonly i18n = inject(I18n);
  private readonly store = inject(ChatStore);
  private readonly usage = inject(UsageLive);
  protected readonly showJump = signal(false);
  /**
   * the per-chat total of tokens and answer time ('' before any answer has stats), with what the chat has cost so far
   * by the usage ledger (its background calls, such as the title, included) when any of its calls was priced
   */
  protected readonly totalText = computed(() => {
    const totals = chatTotals(this.messages());
    if (totals.answers === 0 && totals.tokens === 0) return '';
    const seconds = formatSeconds(totals.durationMs);
    const text =
      totals.tokens > 0
        ? this.i18n.t('chat.stats.total', { tokens: totals.tokens, seconds })
        : this.i18n.t('chat.stats.totalTime', { seconds });
    const cost = formatCosts(this.usage.chatUsage(this.chatId())?.totals.cost ?? [], this.i18n.locale());
    return cost === '' ? text : `${text} · ${this.i18n.t('chat.stats.chatCost', { cost })}`;
  });
  /** "via Telegram · <name>" above a user message that arrived through a channel */
  protected sourceText(source: ChannelMessageSource): string {
    return messageSourceText(source, (key, params) => this.i18n.t(key, params));
  }
  /** which actions the open chat offers now (none while a turn runs) */
  protected readonly actions = computed(() => availableActions(this.store.activeThread()));
  /** the user message being edited inline, and its draft */
  protected readonly editingId = signal<number | null>(null);
  protected readonly draft = signal('');
  private readonly scroller = viewChild.required<ElementRef<HTMLElement>>('scroller');
  private stick = true;
  private renderedChat: string | null | undefined = undefined;

  constructor() {
    effect(() => {
      const chatId = this.chatId();
      if (chatId !== null) void this.usage.loadChat(chatId);
    });
    afterRenderEffect({
      write: () => {
        this.messages();
        const chatId = this.chatId();
        const element = this.scroller().nativeElement;
        if (chatId !== this.renderedChat) {
          this.renderedChat = chatId;
          this.stick = true;
        }
        if (this.stick) element.scrollTop = element.scrollHeight;
      },
    });
  }

  /** The chip text of a selection the turn ran without (`Skill github not used: missing a dependency`). */
  protected attachmentChips(receipts: readonly AttachmentReceipt[]): AttachmentChip[] {
    return receipts.map((receipt, index) => chipOfReceipt(receipt, index));
  }

  protected warningText(warning: TurnWarning): string {
    const key = warning.subject === 'mcp' ? 'chat.warning.mcp' : 'chat.warning.skill';
    return this.i18n.t(key, { name: warning.name, reason: this.i18n.t(warningReasonKey(warning.code)) });
  }

  /** Sends a failed prompt again as a new turn. */
  protected retry(messageId: number): void {
    this.stick = true;
    this.store.retry(messageId);
  }

  /**
   * `2.4 s · 120 in · 45 out` (duration only when the provider reported no usage); `120 in (100 cached) · 45 out` when
   * the provider served part of the prompt from its cache.
   */
  protected statsText(message: ChatMessage): string {
    const parts: string[] = [];
    if (typeof message.durationMs === 'number') {
      parts.push(this.i18n.t('chat.stats.duration', { seconds: formatSeconds(message.durationMs) }));
    }
    if (message.usage) {
      const cached = message.usage.cached_tokens ?? 0;
      parts.push(
        this.i18n.t(cached > 0 ? 'chat.stats.tokensCached' : 'chat.stats.tokens', {
          prompt: message.usage.prompt_tokens,
          cached,
          completion: message.usage.completion_tokens,
        }),
      );
    }
    return parts.join(' · ');
  }

  /** The answer's cost (`$0.0012`), `no price` when its model has none; '' while the usage is unknown. */
  protected costText(message: ChatMessage): string {
    if (!message.usage) return '';
    return message.cost ? formatMoney(message.cost, this.i18n.locale()) : this.i18n.t('chat.stats.noPrice');
  }

  protected startEdit(message: ChatMessage): void {
    this.draft.set(message.content);
    this.editingId.set(message.id);
  }

  protected cancelEdit(): void {
    this.editingId.set(null);
  }

  /** Save & resend: the message is resent with the draft; what followed it is replaced by the new answer. */
  protected saveEdit(event: Event, messageId: number): void {
    event.preventDefault();
    this.stick = true;
    if (this.store.editMessage(messageId, this.draft()).ok) this.editingId.set(null);
  }

  protected regenerate(): void {
    this.stick = true;
    this.store.regenerate();
  }

  protected continueAnswer(): void {
    this.stick = true;
    this.store.continueAnswer();
  }

  protected onScroll(): void {
    const element = this.scroller().nativeElement;
    const distance = element.scrollHeight - element.scrollTop - element.clientHeight;
    this.stick = distance <= STICK_THRESHOLD_PX;
    this.showJump.set(!this.stick);
  }

  protected jumpToLatest(): void {
    const element = this.scroller().nativeElement;
    this.stick = true;
    this.showJump.set(false);
    element.scrollTo({ top: element.scrollHeight, behavior: 'smooth' });
  }
}
