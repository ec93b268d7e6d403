import type { ChannelListResponse, TelegramApprovedSender, TelegramChannelSettings, TelegramPairingsResponse } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import { ChannelError } from './channels.errors';
import {
  ChannelListResponseDto,
  TelegramApprovedSenderDto,
  TelegramChannelSettingsDto,
  TelegramPairingsResponseDto,
  UpdateTelegramChannelDto,
} from './dto/channels.dto';
import { TelegramChannelService } from './telegram/telegram-channel.service';

const CODE_PATTERN = /^[A-Za-z0-9]{4,16}$/;
const SENDER_PATTERN = /^-?\d{1,20}$/;

/** `/api/channels`: the messaging channels, Telegram's settings and its pairings (openspec channels). */
@ApiTags('channels')
@Controller('/api/channels')
export class ChannelsController {
  constructor(private readonly telegram: TelegramChannelService) {}

  @Get()
  @ApiOperation({ summary: 'The channels with their status' })
  @ApiOkResponse({ type: ChannelListResponseDto })
  async list(): Promise<ChannelListResponse> {
    return { channels: [await this.telegram.listEntry()] };
  }

  @Get('telegram')
  @ApiOperation({ summary: "Telegram's settings and status (the bot token is never returned, only a masked hint)" })
  @ApiOkResponse({ type: TelegramChannelSettingsDto })
  settings(): Promise<TelegramChannelSettings> {
    return this.telegram.getSettings();
  }

  @Put('telegram')
  @ApiOperation({
    summary: "Changes Telegram's settings; polling restarts with them",
    description: 'Every field is optional. `token` is write-only ("" clears it) and is bound to the Bot API origin.',
  })
  @ApiBody({ type: UpdateTelegramChannelDto })
  @ApiOkResponse({ type: TelegramChannelSettingsDto })
  @ApiProblemResponses(422)
  update(@Body() body: UpdateTelegramChannelDto): Promise<TelegramChannelSettings> {
    return this.telegram.update(body);
  }

  @Get('telegram/pairings')
  @ApiOperation({ summary: 'Pending pairing requests and the approved senders' })
  @ApiOkResponse({ type: TelegramPairingsResponseDto })
  pairings(): Promise<TelegramPairingsResponse> {
    return this.telegram.pairings();
  }

  @Post('telegram/pairings/:code/approve')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Approves a pairing code: its sender (or group) may talk to the agent' })
  @ApiParam({ name: 'code', example: 'K7M2Q9XP' })
  @ApiOkResponse({ type: TelegramApprovedSenderDto })
  @ApiProblemResponses(404)
  approve(@Param('code') code: string): Promise<TelegramApprovedSender> {
    if (!CODE_PATTERN.test(code)) throw new ChannelError('not_found', 'No pending pairing has this code (it may have expired).');
    return this.telegram.approve(code);
  }

  @Delete('telegram/senders/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revokes an approved sender (or group); its running turn is stopped' })
  @ApiParam({ name: 'id', example: '123456789' })
  @ApiNoContentResponse({ description: 'revoked' })
  @ApiProblemResponses(404)
  async revoke(@Param('id') id: string): Promise<void> {
    if (!SENDER_PATTERN.test(id)) throw new ChannelError('not_found', 'No approved sender has this id.');
    await this.telegram.revoke(id);
  }
}
