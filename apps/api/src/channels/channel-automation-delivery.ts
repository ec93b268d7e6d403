/**
 * Automation runs delivered to a channel conversation (openspec channels "Requirement: Automation runs delivered to a
 * conversation"): the AUTOMATION_DELIVERY the automations module asks for. A target is a Telegram conversation of an
 * approved sender — the owner's private chat or an approved group — checked when the automation is saved and when it
 * runs; a revoked sender gets nothing. The text is rendered like a channel answer (escaped for Telegram's HTML, split
 * at its 4,096-character limit without breaking a code block).
 */
import { Injectable, Logger } from '@nestjs/common';
import type { AutomationDelivery, DeliveryTarget } from '../automations/automation-delivery';
import { formatEvent } from '../common/log-format';
import { ChannelTurnsService } from './channel-turns.service';
import { TelegramChannelService } from './telegram/telegram-channel.service';

@Injectable()
export class ChannelAutomationDelivery implements AutomationDelivery {
  private readonly logger = new Logger('ChannelDelivery');

  constructor(
    private readonly channels: ChannelTurnsService,
    private readonly telegram: TelegramChannelService,
  ) {}

  async check(target: DeliveryTarget): Promise<string | null> {
    if (target.kind !== 'telegram') return `Channel ${JSON.stringify(target.kind)} does not exist.`;
    const sender = await this.channels.pairings('telegram').approved(target.chat_id);
    if (!sender) {
      return `Telegram chat ${target.chat_id} is not an approved sender (never paired, or revoked): choose an approved sender to deliver to.`;
    }
    return null;
  }

  async deliver(target: DeliveryTarget, text: string): Promise<void> {
    const refused = await this.check(target);
    if (refused !== null) throw new Error(refused);
    const adapter = this.telegram.connectedAdapter();
    if (!adapter) throw new Error('Telegram is not connected');
    for (const rendered of adapter.render(text)) await adapter.sendMessage(target.chat_id, rendered);
    this.logger.log(formatEvent('channel.automation.delivered', { channel: target.kind }));
  }
}
