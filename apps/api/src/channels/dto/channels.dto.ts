/** OpenAPI shapes and request validation of `/api/channels*`; each implements its @cashcode/contracts interface. */
import {
  LLM_PROVIDERS,
  type ChannelListEntry,
  type ChannelListResponse,
  type ChannelModelSelection,
  type ChannelStatus,
  type TelegramApprovedSender,
  type TelegramChannelSettings,
  type TelegramChatType,
  type TelegramPairingRequest,
  type TelegramPairingsResponse,
  type UpdateTelegramChannelRequest,
} from '@cashcode/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';

const STATUSES: ChannelStatus[] = ['disabled', 'connecting', 'connected', 'error'];
const CHAT_TYPES: TelegramChatType[] = ['private', 'group', 'supergroup'];

export class ChannelModelSelectionDto implements ChannelModelSelection {
  @ApiProperty({ enum: LLM_PROVIDERS })
  @IsIn(LLM_PROVIDERS as unknown as string[], { message: `must be one of ${LLM_PROVIDERS.join(', ')}` })
  provider!: string;

  @ApiProperty({ example: 'gpt-4o-mini' })
  @IsString({ message: 'must be a string' })
  @MinLength(1, { message: 'must not be empty' })
  @MaxLength(200, { message: 'must be at most 200 characters' })
  model!: string;
}

export class ChannelListEntryDto implements ChannelListEntry {
  @ApiProperty({ enum: ['telegram'] }) kind!: 'telegram';
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ enum: STATUSES }) status!: ChannelStatus;
}

export class ChannelListResponseDto implements ChannelListResponse {
  @ApiProperty({ type: [ChannelListEntryDto] }) channels!: ChannelListEntryDto[];
}

export class TelegramChannelSettingsDto implements TelegramChannelSettings {
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ description: 'whether a bot token is stored (the token itself is never returned)' }) token_set!: boolean;
  @ApiProperty({ type: String, nullable: true, example: '…AbCd' }) token_hint!: string | null;
  @ApiProperty({ example: 'https://api.telegram.org' }) api_root!: string;
  @ApiProperty() groups_enabled!: boolean;
  @ApiProperty({ enum: STATUSES }) status!: ChannelStatus;
  @ApiProperty({ type: String, nullable: true }) error!: string | null;
  @ApiProperty({ type: String, nullable: true }) bot_username!: string | null;
  @ApiProperty({ type: ChannelModelSelectionDto, nullable: true }) model!: ChannelModelSelectionDto | null;
}

export class UpdateTelegramChannelDto implements UpdateTelegramChannelRequest {
  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: 'must be a boolean' })
  enabled?: boolean;

  @ApiPropertyOptional({ description: 'write-only; "" clears the stored token', example: '123456789:AA…' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(200, { message: 'must be at most 200 characters' })
  token?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: 'must be a boolean' })
  groups_enabled?: boolean;

  @ApiPropertyOptional({ type: ChannelModelSelectionDto, nullable: true, description: 'null clears the channel’s own model' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ChannelModelSelectionDto)
  model?: ChannelModelSelectionDto | null;
}

export class TelegramPairingRequestDto implements TelegramPairingRequest {
  @ApiProperty({ example: 'K7M2Q9XP' }) code!: string;
  @ApiProperty({ example: '123456789' }) sender_id!: string;
  @ApiProperty() display_name!: string;
  @ApiProperty({ type: String, nullable: true }) username!: string | null;
  @ApiProperty({ enum: CHAT_TYPES }) chat_type!: TelegramChatType;
  @ApiProperty() requested_at!: string;
  @ApiProperty() expires_at!: string;
}

export class TelegramApprovedSenderDto implements TelegramApprovedSender {
  @ApiProperty() sender_id!: string;
  @ApiProperty() display_name!: string;
  @ApiProperty({ type: String, nullable: true }) username!: string | null;
  @ApiProperty() approved_at!: string;
  @ApiProperty({ enum: ['user', 'group'], description: '`user`: the owner (paired from a private chat); `group`: a group whose members may talk' })
  kind!: 'user' | 'group';
}

export class TelegramPairingsResponseDto implements TelegramPairingsResponse {
  @ApiProperty({ type: [TelegramPairingRequestDto] }) pending!: TelegramPairingRequestDto[];
  @ApiProperty({ type: [TelegramApprovedSenderDto] }) senders!: TelegramApprovedSenderDto[];
}
