/** Request and response shapes of `/api/settings/openai-compat` (OpenAPI + validation). */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import {
  LLM_PROVIDERS,
  type CreatedOpenAiCompatKey,
  type CreateOpenAiCompatKeyRequest,
  type LlmProvider,
  type LlmSelection,
  type OpenAiCompatKey,
  type OpenAiCompatSettings,
  type UpdateOpenAiCompatSettingsRequest,
} from '@cashcode/contracts';
import { KEY_NAME_MAX_CHARS } from '../openai-compat-settings.service';

export class LlmSelectionDto implements LlmSelection {
  @ApiProperty({ enum: [...LLM_PROVIDERS] })
  @IsIn([...LLM_PROVIDERS])
  provider!: LlmProvider;

  @ApiProperty({ example: 'gpt-4o-mini' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  model!: string;
}

export class UpdateOpenAiCompatSettingsDto implements UpdateOpenAiCompatSettingsRequest {
  @ApiPropertyOptional({ description: 'turn `/v1` on or off (off by default: `/v1/*` answers 404 `endpoint_disabled`)' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: LlmSelectionDto,
    nullable: true,
    description: 'what the model id `cashcode` runs; null → the model the last turn used, else the background model',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => LlmSelectionDto)
  default_model?: LlmSelectionDto | null;

  @ApiPropertyOptional({ description: 'stream a short `[tool: name]` line for each tool call (default off)' })
  @IsOptional()
  @IsBoolean()
  tool_progress?: boolean;

  @ApiPropertyOptional({
    description: 'run a request with a `user` field as a turn of the chat `openai-user-<first 32 hex of sha256(user)>`',
  })
  @IsOptional()
  @IsBoolean()
  map_user_to_chat?: boolean;
}

export class CreateOpenAiCompatKeyDto implements CreateOpenAiCompatKeyRequest {
  @ApiProperty({ example: 'Open WebUI', maxLength: KEY_NAME_MAX_CHARS })
  @IsString()
  @IsNotEmpty()
  @MaxLength(KEY_NAME_MAX_CHARS)
  name!: string;
}

export class OpenAiCompatKeyDto implements OpenAiCompatKey {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'the first characters of the secret', example: 'cck_Ab12Cd' }) prefix!: string;
  @ApiProperty({ example: '2026-07-26T12:00:00+08:00' }) created_at!: string;
  @ApiProperty({ type: String, nullable: true }) last_used_at!: string | null;
}

export class OpenAiCompatSettingsDto implements OpenAiCompatSettings {
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: LlmSelectionDto, nullable: true }) default_model!: LlmSelectionDto | null;
  @ApiProperty() tool_progress!: boolean;
  @ApiProperty() map_user_to_chat!: boolean;
  @ApiProperty({ type: [OpenAiCompatKeyDto] }) keys!: OpenAiCompatKeyDto[];
  @ApiProperty({ description: 'whether the server API token (CASHCODE_API_TOKEN) is also accepted on `/v1`' })
  api_token_accepted!: boolean;
}

export class CreatedOpenAiCompatKeyDto implements CreatedOpenAiCompatKey {
  @ApiProperty({ type: OpenAiCompatKeyDto }) key!: OpenAiCompatKeyDto;
  @ApiProperty({ description: 'the secret; shown only in this response (stored as a SHA-256 hash)' }) secret!: string;
}
