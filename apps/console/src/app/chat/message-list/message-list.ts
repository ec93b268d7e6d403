import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  afterRenderEffect,
  inject,
  input,
  signal,
  viewChild,
} from '@angular/core';
import { MatButtonModule } from '@angular/material/button';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { AttachmentReceipt } from '@cashcode/contracts';
import { AssistantMessage } from '../assistant-message/assistant-message';
import { AttachmentChips } from '../attachments/attachment-chips';
import { chipOfReceipt, type AttachmentChip } from '../attachments/attachment-rules';
import type { ChatMessage, TurnWarning } from '../chat-state';
import { warningReasonKey } from './turn-warning';
import { ChatStore } from '../chat-store';

/** Distance from the bottom (px) beyond which the list stops following new content. */
export const STICK_THRESHOLD_PX = 80;

/**
 * The conversation. Follows new content to the bottom unless the reader scrolled up (more than 80 px from the
 * bottom); then a "Jump to latest" button appears.
 */
@Component({
  selector: 'cc-message-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, AssistantMessage, Icon, AttachmentChips],
  templateUrl: './message-list.html',
  styleUrl: './message-list.scss',
})
export class MessageList {
  readonly messages = input.required<readonly ChatMessage[]>();
  readonly chatId = input<string | null>(null);

  protected readonly i18n = inject(I18n);
  private readonly store = inject(ChatStore);
  protected readonly showJump = signal(false);
  private readonly scroller = viewChild.required<ElementRef<HTMLElement>>('scroller');
  private stick = true;
  private renderedChat: string | null | undefined = undefined;

  constructor() {
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
