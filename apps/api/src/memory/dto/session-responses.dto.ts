/** OpenAPI shapes of the sessions responses; each implements its @cashcode/contracts interface. */
import type {
  ChannelMessageSource,
  LoadedSkillReceipt,
  SessionChannelInfo,
  McpConnectorReceipt,
  AttachmentReceipt,
  PublicMessage,
  PublicToolRecord,
  PublicTurnError,
  RenameSessionResponse,
  SessionExportJson,
  SessionListResponse,
  SessionSearchResponse,
  SessionSearchResult,
  SessionMessagesResponse,
  SessionSummary,
  SkillReceipt,
  TokenUsage,
  Money,
} from '@cashcode/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class SessionChannelInfoDto implements SessionChannelInfo {
  @ApiProperty({ enum: ['telegram'] }) kind!: 'telegram';
  @ApiProperty({ example: 'Ada' }) display_name!: string;
  @ApiProperty({ example: '123456789' }) sender_id!: string;
  @ApiProperty({ enum: ['private', 'group', 'supergroup'] }) chat_type!: 'private' | 'group' | 'supergroup';
}

export class ChannelMessageSourceDto implements ChannelMessageSource {
  @ApiProperty({ enum: ['telegram'] }) channel!: 'telegram';
  @ApiProperty({ example: 'cashcode_bot', description: "the bot's username (or id)" }) account!: string;
  @ApiProperty({ example: '123456789' }) sender_id!: string;
  @ApiProperty({ example: 'Ada' }) display_name!: string;
  @ApiPropertyOptional({ description: 'false for a group member who is not the owner (untrusted input)' }) owner?: boolean;
}

export class SessionSummaryDto implements SessionSummary {
  @ApiProperty({ example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' })
  chat_id!: string;

  @ApiProperty({ example: 'Trip planning', description: 'metadata title, or "New chat" when there is none' })
  title!: string;

  @ApiProperty({
    example: '2026-07-26T12:00:00',
    description: 'last change (history.jsonl mtime, else the directory), local time YYYY-MM-DDTHH:MM:SS',
  })
  updated_at!: string;

  @ApiPropertyOptional({ type: () => SessionChannelInfoDto, description: 'the chat belongs to a channel conversation' })
  channel?: SessionChannelInfoDto;
}

export class SessionListResponseDto implements SessionListResponse {
  @ApiProperty({ type: [SessionSummaryDto], description: 'most recently updated first' })
  sessions!: SessionSummaryDto[];
}

export class SkillReceiptDto implements SkillReceipt {
  @ApiProperty({ example: 'weather' })
  name!: string;

  @ApiPropertyOptional({ example: 'Weather' })
  label?: string;
}

export class McpConnectorReceiptDto implements McpConnectorReceipt {
  @ApiProperty({ example: 'github' })
  server!: string;

  @ApiPropertyOptional({ example: 'GitHub' })
  label?: string;
}

export class PublicTurnErrorDto implements PublicTurnError {
  @ApiProperty({ example: 'auth', description: 'the code of the turn\'s `error` event' })
  kind!: string;

  @ApiProperty({ example: 'Authentication failed: check the API key.', description: 'safe English detail' })
  message!: string;
}

export class PublicToolRecordDto implements PublicToolRecord {
  @ApiProperty({ example: 'call_1' })
  call_id!: string;

  @ApiProperty({ example: 'list_dir' })
  name!: string;

  @ApiProperty({ example: '{"path":"."}', description: 'redacted argument JSON, at most 500 code points' })
  arguments!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '[file] notes.md',
    description: 'first 200 code points of the persisted result; null without a result record',
  })
  result_preview!: string | null;

  @ApiProperty({ type: Boolean, nullable: true, description: 'null when not recorded' })
  ok!: boolean | null;

  @ApiProperty({ type: Number, nullable: true, example: 12, description: 'null when not recorded' })
  duration_ms!: number | null;
}

export class TokenUsageDto implements TokenUsage {
  @ApiProperty({ example: 120 })
  prompt_tokens!: number;

  @ApiProperty({ example: 45 })
  completion_tokens!: number;

  @ApiProperty({ example: 165 })
  total_tokens!: number;
}

export class PublicMessageDto implements PublicMessage {
  @ApiProperty({ enum: ['user', 'assistant'] })
  role!: 'user' | 'assistant';

  @ApiProperty({ example: 'Hello!' })
  content!: string;

  @ApiPropertyOptional({ type: () => ChannelMessageSourceDto, description: 'user rows: the message came through a channel' })
  source?: ChannelMessageSourceDto;

  @ApiPropertyOptional({ type: [SkillReceiptDto], description: 'user rows: Skills the user selected' })
  mentioned_skills?: SkillReceiptDto[];

  @ApiPropertyOptional({ type: [McpConnectorReceiptDto], description: 'user rows: MCP connectors the user selected' })
  selected_mcp_connectors?: McpConnectorReceiptDto[];

  @ApiPropertyOptional({ example: true, description: 'assistant rows: the partial answer of a cancelled turn' })
  cancelled?: boolean;

  @ApiPropertyOptional({
    type: 'array',
    items: {
      type: 'object',
      properties: { name: { type: 'string' }, version: { type: 'integer' }, hash: { type: 'string' } },
      required: ['name', 'version', 'hash'],
    },
    description: 'user rows: Skills explicitly loaded for the turn (shown as chips, never as assistant bubbles)',
  })
  loaded_skills?: LoadedSkillReceipt[];

  @ApiPropertyOptional({
    type: PublicTurnErrorDto,
    description: 'user rows: the turn of this message failed (never answered; a retry is a new turn)',
  })
  error?: PublicTurnErrorDto;

  @ApiPropertyOptional({
    type: [PublicToolRecordDto],
    description: 'assistant rows: the tool calls the turn made before this answer, in order',
  })
  tools?: PublicToolRecordDto[];

  @ApiPropertyOptional({
    example: 3,
    description:
      'the history cursor of the row (the target of an `edit` chat action); rows replaced by regenerate, edit or continue are not listed',
  })
  cursor?: number;

  @ApiPropertyOptional({
    type: TokenUsageDto,
    description: "assistant rows: the turn's token usage, only when the provider reported it",
  })
  usage?: TokenUsageDto;

  @ApiPropertyOptional({
    type: 'object',
    properties: { amount: { type: 'number', example: 0.0123 }, currency: { type: 'string', example: 'USD' } },
    required: ['amount', 'currency'],
    description: "assistant rows: the turn's cost from the price table when it was recorded; absent: its model had no price",
  })
  cost?: Money;

  @ApiPropertyOptional({ example: 2400, description: 'assistant rows: how long the turn took until the answer was complete, in ms' })
  duration_ms?: number;

  @ApiPropertyOptional({
    type: 'array',
    items: {
      type: 'object',
      properties: { name: { type: 'string' }, path: { type: 'string' }, size: { type: 'integer' }, mime: { type: 'string' } },
      required: ['name', 'path', 'size', 'mime'],
    },
    description: 'user rows: the uploaded files the message referred to (`POST /api/sessions/{chat_id}/attachments`)',
  })
  attachments?: AttachmentReceipt[];
}

export class SessionMessagesResponseDto implements SessionMessagesResponse {
  @ApiProperty({ example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' })
  chat_id!: string;

  @ApiProperty({ type: [PublicMessageDto], description: 'user and assistant messages in order' })
  messages!: PublicMessageDto[];
}

export class RenameSessionResponseDto implements RenameSessionResponse {
  @ApiProperty({ example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' })
  chat_id!: string;

  @ApiProperty({ example: 'Trip planning', description: 'the stored (trimmed) title' })
  title!: string;
}

export class SessionExportJsonDto implements SessionExportJson {
  @ApiProperty({ enum: ['cashcode.session-export'] })
  format!: 'cashcode.session-export';

  @ApiProperty({ enum: [1] })
  version!: 1;

  @ApiProperty({ example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' })
  chat_id!: string;

  @ApiProperty({ example: 'Trip planning', description: 'metadata title, or "New chat" when there is none' })
  title!: string;

  @ApiProperty({ example: '2026-07-26T10:00:00.000Z', description: 'when the export was made, ISO 8601 UTC' })
  exported_at!: string;

  @ApiProperty({ type: [PublicMessageDto], description: 'the same messages as GET /api/sessions/{chat_id}/messages' })
  messages!: PublicMessageDto[];
}

export class SessionSearchResultDto implements SessionSearchResult {
  @ApiProperty({ example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' })
  chat_id!: string;

  @ApiProperty({ example: 'Trip planning' })
  title!: string;

  @ApiProperty({ example: '2026-07-26T12:00:00', description: 'local time YYYY-MM-DDTHH:MM:SS, as in the list' })
  updated_at!: string;

  @ApiProperty({ enum: ['title', 'content'] })
  match!: 'title' | 'content';

  @ApiPropertyOptional({ example: '… the capital of France is Paris …', description: 'content matches only' })
  snippet?: string;

  @ApiPropertyOptional({ enum: ['user', 'assistant'], description: 'content matches only' })
  role?: 'user' | 'assistant';
}

export class SessionSearchResponseDto implements SessionSearchResponse {
  @ApiProperty({ example: 'capital', description: 'the trimmed query' })
  query!: string;

  @ApiProperty({ type: [SessionSearchResultDto], description: 'title matches (newest first), then content matches' })
  results!: SessionSearchResultDto[];
}
