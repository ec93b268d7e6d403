/**
 * Approvals of turns no one is watching reach the owner on a channel (openspec channels "Requirement: Headless
 * approvals reach the owner"): an `approval_request` of an automation's run (approvals `wait`), or of any chat that no
 * console follows and that is not itself a channel conversation, is sent to every approved private owner of the
 * connected Telegram bot as a question with buttons — the same ChannelApprovals as a channel chat's (exact command,
 * risk, Allow once / Always / Deny, token-mapped callbacks, only the owner can press), decided through
 * ApprovalsService.decide. Whichever answers first, a console card or a button, wins; the `approval_resolved` that
 * follows closes the other (the card resolves, the question loses its buttons and says what was decided).
 */
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { ApprovalRequestEvent } from '@cashcode/contracts';
import { isAutomationChat } from '../automations/automation-runner';
import { ChatGateway } from '../chat/chat.gateway';
import { ChatService } from '../chat/chat.service';
import { errorType, formatEvent } from '../common/log-format';
import { ChannelTurnsService } from './channel-turns.service';
import { TelegramChannelService } from './telegram/telegram-channel.service';

@Injectable()
export class OwnerApprovalNotices implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ChannelApprovals');
  private events: Subscription | null = null;

  constructor(
    private readonly chat: ChatService,
    private readonly gateway: ChatGateway,
    private readonly channels: ChannelTurnsService,
    private readonly telegram: TelegramChannelService,
  ) {}

  onModuleInit(): void {
    this.events = this.chat.events$.subscribe(({ chatId, event }) => {
      // a channel conversation's chat asks in its own conversation (channel-turns.service.ts)
      if (this.channels.follows(chatId)) return;
      if (event.event === 'approval_request') {
        if (isAutomationChat(chatId) || !this.gateway.hasAudience(chatId)) void this.notify(event);
      } else if (event.event === 'approval_resolved') {
        void this.channels.approvalButtons.resolved(event);
      }
    });
  }

  onModuleDestroy(): void {
    this.events?.unsubscribe();
  }

  private async notify(event: ApprovalRequestEvent): Promise<void> {
    const adapter = this.telegram.connectedAdapter();
    if (!adapter) return;
    try {
      const { senders } = await this.channels.pairings('telegram').list();
      const owners = senders.filter((sender) => sender.kind === 'user');
      const where = isAutomationChat(event.chat_id) ? 'An automation run' : 'A chat no console is following';
      const heading = `${where} (\`${event.chat_id}\`) asks:`;
      for (const owner of owners) await this.channels.approvalButtons.ask(adapter, owner.sender_id, event, heading);
      if (owners.length > 0) this.logger.log(formatEvent('channel.approval.forwarded', { channel: adapter.kind, call_id: event.call_id, owners: owners.length }));
    } catch (error) {
      this.logger.warn(formatEvent('channel.approval.send_failed', { channel: adapter.kind, error_type: errorType(error) }));
    }
  }
}
