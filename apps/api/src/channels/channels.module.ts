import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ApprovalsModule } from '../approvals/approvals.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { ChatModule } from '../chat/chat.module';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { ChannelTurnsService } from './channel-turns.service';
import { ChannelsController } from './channels.controller';
import { OwnerApprovalNotices } from './owner-approval-notices';
import { TelegramChannelService } from './telegram/telegram-channel.service';

/**
 * Messaging channels (openspec channels): the framework every channel goes through (ChannelTurnsService: pairing,
 * conversations → chats, turns through ChatService, streaming, approvals by button) and the Telegram channel over
 * grammY (TelegramChannelService), and approvals of turns no console follows sent to the owner (OwnerApprovalNotices).
 * Sits above the chat and automations modules; nothing below imports it.
 */
@Module({
  imports: [AgentModule, ApprovalsModule, AttachmentsModule, ChatModule, LlmSettingsModule],
  controllers: [ChannelsController],
  providers: [ChannelTurnsService, TelegramChannelService, OwnerApprovalNotices],
  exports: [ChannelTurnsService, TelegramChannelService],
})
export class ChannelsModule {}
