/**
 * OpenAPI shapes of `/api/usage/*` (documentation only: the handlers validate bodies and queries by hand, strictly,
 * with per-field problem details; see usage-settings.ts and usage-query.ts).
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  LLM_PROVIDERS,
  MODEL_CALL_PURPOSES,
  type ChatUsage,
  type LlmProvider,
  type ModelCallOutcome,
  type ModelCallPurpose,
  type ModelPrice,
  type Money,
  type PriceTable,
  type SpendLimit,
  type SpendLimitScope,
  type SpendLimitSettings,
  type SpendLimitsStatus,
  type SpendLimitStatus,
  type SpendLimitUnit,
  type SpendLimitWindow,
  type UsageRecord,
  type UsageRecordsPage,
  type UsageSummary,
  type UsageSummaryRow,
  type UsageTotals,
} from '@cashcode/contracts';

export class MoneyDto implements Money {
  @ApiProperty({ example: 0.0123 })
  amount!: number;
  @ApiProperty({ example: 'USD', pattern: '^[A-Z]{3}$' })
  currency!: string;
}

export class UsageRecordDto implements UsageRecord {
  @ApiProperty({ example: 42 })
  id!: number;
  @ApiProperty({ example: '2026-07-26T12:00:00+02:00', description: 'when the call started (server offset)' })
  at!: string;
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;
  @ApiProperty({ example: 'gpt-4o-mini' })
  model!: string;
  @ApiProperty({ enum: MODEL_CALL_PURPOSES })
  purpose!: ModelCallPurpose;
  @ApiPropertyOptional({ example: 'chat-1' })
  chat_id?: string;
  @ApiProperty()
  prompt_tokens!: number;
  @ApiProperty({ description: 'prompt tokens served from the provider cache (0 when it does not say)' })
  cached_tokens!: number;
  @ApiProperty()
  completion_tokens!: number;
  @ApiProperty()
  total_tokens!: number;
  @ApiProperty({ description: 'the provider reported no usage: tokens estimated from the request and answer sizes' })
  estimated!: boolean;
  @ApiProperty()
  duration_ms!: number;
  @ApiProperty({ enum: ['ok', 'error', 'cancelled', 'refused'] })
  outcome!: ModelCallOutcome;
  @ApiPropertyOptional({ example: 'spend_limit_reached' })
  error_code?: string;
  @ApiPropertyOptional({ type: MoneyDto, description: 'absent: the model had no price ("no price")' })
  cost?: MoneyDto;
}

export class UsageRecordsPageDto implements UsageRecordsPage {
  @ApiProperty({ type: [UsageRecordDto], description: 'newest first' })
  records!: UsageRecordDto[];
  @ApiPropertyOptional({ description: 'pass as `before` for the next (older) page; absent on the last page' })
  next_before?: number;
}

export class UsageTotalsDto implements UsageTotals {
  @ApiProperty()
  calls!: number;
  @ApiProperty()
  prompt_tokens!: number;
  @ApiProperty()
  cached_tokens!: number;
  @ApiProperty()
  completion_tokens!: number;
  @ApiProperty()
  total_tokens!: number;
  @ApiProperty()
  estimated_calls!: number;
  @ApiProperty({ description: 'calls of models without a price' })
  unpriced_calls!: number;
  @ApiProperty({ type: [MoneyDto], description: 'one entry per currency' })
  cost!: MoneyDto[];
}

export class UsageSummaryRowDto extends UsageTotalsDto implements UsageSummaryRow {
  @ApiProperty({ example: '2026-07-26' })
  day!: string;
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;
  @ApiProperty()
  model!: string;
  @ApiProperty({ enum: MODEL_CALL_PURPOSES })
  purpose!: ModelCallPurpose;
}

export class UsageSummaryDto implements UsageSummary {
  @ApiProperty({ example: '2026-06-27' })
  from!: string;
  @ApiProperty({ example: '2026-07-26' })
  to!: string;
  @ApiProperty({ example: 'Europe/Berlin' })
  time_zone!: string;
  @ApiProperty({ type: [UsageSummaryRowDto] })
  rows!: UsageSummaryRowDto[];
  @ApiProperty({ type: UsageTotalsDto })
  totals!: UsageTotalsDto;
}

export class ChatUsageDto implements ChatUsage {
  @ApiProperty()
  chat_id!: string;
  @ApiProperty({ type: UsageTotalsDto })
  totals!: UsageTotalsDto;
}

export class ModelPriceDto implements ModelPrice {
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;
  @ApiProperty({ example: 'example-model' })
  model!: string;
  @ApiProperty({ minimum: 0, example: 1 })
  input_per_million!: number;
  @ApiPropertyOptional({ minimum: 0, description: 'defaults to input_per_million' })
  cached_input_per_million?: number;
  @ApiProperty({ minimum: 0, example: 2 })
  output_per_million!: number;
  @ApiProperty({ pattern: '^[A-Z]{3}$', example: 'USD' })
  currency!: string;
}

export class PriceTableDto implements PriceTable {
  @ApiProperty({ type: [ModelPriceDto], description: 'one price per provider and model' })
  prices!: ModelPriceDto[];
}

export class SpendLimitDto implements SpendLimit {
  @ApiProperty({ pattern: '^[A-Za-z0-9_-]{1,64}$', example: 'daily-tokens' })
  id!: string;
  @ApiProperty({ enum: ['global', 'model', 'background'] })
  scope!: SpendLimitScope;
  @ApiPropertyOptional({ enum: LLM_PROVIDERS, description: 'scope model only (required there)' })
  provider?: LlmProvider;
  @ApiPropertyOptional({ description: 'scope model only (required there)' })
  model?: string;
  @ApiProperty({ enum: ['day', 'month'] })
  window!: SpendLimitWindow;
  @ApiProperty({ enum: ['tokens', 'money'] })
  unit!: SpendLimitUnit;
  @ApiProperty({ minimum: 0 })
  amount!: number;
  @ApiPropertyOptional({ pattern: '^[A-Z]{3}$', description: 'unit money only (required there)' })
  currency?: string;
}

export class SpendLimitSettingsDto implements SpendLimitSettings {
  @ApiProperty({ type: [SpendLimitDto], description: 'ids unique' })
  limits!: SpendLimitDto[];
  @ApiProperty({ example: 0.8, minimum: 0, maximum: 1, description: 'strictly between 0 and 1; default 0.8' })
  warn_at!: number;
}

export class SpendLimitStatusDto extends SpendLimitDto implements SpendLimitStatus {
  @ApiProperty({ description: 'settled use in the current window' })
  used!: number;
  @ApiProperty({ description: 'estimates of calls in flight' })
  reserved!: number;
  @ApiProperty()
  share!: number;
  @ApiProperty({ enum: ['ok', 'warning', 'reached'] })
  state!: 'ok' | 'warning' | 'reached';
  @ApiProperty({ example: '2026-07-27T00:00:00+02:00' })
  resets_at!: string;
}

export class SpendLimitsStatusDto implements SpendLimitsStatus {
  @ApiProperty()
  time_zone!: string;
  @ApiProperty()
  warn_at!: number;
  @ApiProperty({ type: [SpendLimitStatusDto] })
  limits!: SpendLimitStatusDto[];
}
