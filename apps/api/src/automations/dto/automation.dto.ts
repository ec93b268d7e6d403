/**
 * OpenAPI shapes of `/api/automations` (documentation only: the handlers check bodies by hand, strictly, with
 * per-field problem details; see automation-input.ts and automation-schedule.ts).
 */
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { AUTOMATION_RUN_OUTCOMES, LLM_PROVIDERS, type AutomationRunOutcome } from '@cashcode/contracts';

const SCHEDULE_SCHEMA = {
  description: 'cron with a time zone, an interval in seconds, or once at a date',
  oneOf: [
    {
      type: 'object',
      required: ['kind', 'expression', 'timezone'],
      properties: { kind: { enum: ['cron'] }, expression: { type: 'string', example: '0 8 * * 1-5' }, timezone: { type: 'string', example: 'Europe/Berlin' } },
    },
    { type: 'object', required: ['kind', 'every_seconds'], properties: { kind: { enum: ['interval'] }, every_seconds: { type: 'integer', minimum: 60 } } },
    { type: 'object', required: ['kind', 'at'], properties: { kind: { enum: ['once'] }, at: { type: 'string', example: '2026-05-01T08:00:00+02:00' } } },
  ],
} as unknown as ApiPropertyOptions;
const NAMES = { type: 'array', items: { type: 'string' }, nullable: true } as const;

export class LlmSelectionRefDto {
  @ApiProperty({ enum: LLM_PROVIDERS }) provider!: string;
  @ApiProperty({ example: 'gpt-4o-mini' }) model!: string;
}

export class AutomationBudgetDto {
  @ApiPropertyOptional({ description: 'tokens per run, > 0' }) tokens?: number;
  @ApiPropertyOptional({ description: 'US dollars per run (calls priced in USD), > 0' }) usd?: number;
}

export class AutomationInputDto {
  @ApiProperty({ example: 'Weekday news' }) name!: string;
  @ApiProperty({ example: 'Summarise the top three stories of the day.' }) prompt!: string;
  @ApiProperty(SCHEDULE_SCHEMA) schedule!: unknown;
  @ApiProperty({ default: true }) enabled!: boolean;
  @ApiProperty({ type: LlmSelectionRefDto, nullable: true, description: 'null: the default model' }) llm!: LlmSelectionRefDto | null;
  @ApiProperty({ ...NAMES, description: 'null: every tool; else only these built-in tools' }) tools!: string[] | null;
  @ApiProperty({ ...NAMES, description: 'null: every MCP server; else only these' }) mcp_servers!: string[] | null;
  @ApiProperty({ ...NAMES, description: 'null: every Skill; else only these' }) skills!: string[] | null;
  @ApiProperty({ enum: ['wait', 'deny'], default: 'deny' }) approvals!: string;
  @ApiProperty({ type: AutomationBudgetDto, nullable: true }) budget!: AutomationBudgetDto | null;
  @ApiProperty({ default: 600, minimum: 1, maximum: 86_400 }) max_run_seconds!: number;
  @ApiProperty({ enum: ['single', 'per_run'], default: 'single' }) chat_mode!: string;
  @ApiProperty({ enum: ['run_once', 'skip'], default: 'run_once' }) missed!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: { channel: { kind: 'telegram', chat_id: '123456' } } })
  delivery!: unknown;
}

export class AutomationRunDto {
  @ApiProperty() id!: string;
  @ApiProperty() automation_id!: string;
  @ApiProperty({ example: '2026-07-26T08:00:00.012+02:00' }) started_at!: string;
  @ApiProperty({ nullable: true, type: String }) ended_at!: string | null;
  @ApiProperty({ enum: AUTOMATION_RUN_OUTCOMES }) outcome!: AutomationRunOutcome;
  @ApiProperty({ nullable: true, type: String }) error!: string | null;
  @ApiProperty({ nullable: true, type: Number }) cost_usd!: number | null;
  @ApiProperty({ nullable: true, type: Number }) tokens!: number | null;
  @ApiProperty({ nullable: true, type: String }) chat_id!: string | null;
  @ApiProperty({ enum: ['schedule', 'manual', 'missed'] }) trigger!: string;
}

export class AutomationDto extends AutomationInputDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['owner', 'agent'] }) source!: string;
  @ApiProperty() created_at!: string;
  @ApiProperty() updated_at!: string;
  @ApiProperty({ nullable: true, type: String }) next_run_at!: string | null;
  @ApiProperty({ type: AutomationRunDto, nullable: true }) last_run!: AutomationRunDto | null;
  @ApiProperty() running!: boolean;
}

export class AutomationsResponseDto {
  @ApiProperty({ type: [AutomationDto] }) automations!: AutomationDto[];
}

export class AutomationRunResponseDto {
  @ApiProperty({ type: AutomationRunDto }) run!: AutomationRunDto;
}

export class AutomationRunsPageDto {
  @ApiProperty({ type: [AutomationRunDto] }) runs!: AutomationRunDto[];
  @ApiProperty({ nullable: true, type: String, description: 'pass as `before` for the next (older) page' }) next_before!: string | null;
}

export class SchedulePreviewRequestDto {
  @ApiProperty(SCHEDULE_SCHEMA) schedule!: unknown;
}

export class SchedulePreviewResponseDto {
  @ApiProperty({ example: 'At 08:00, Monday through Friday (Europe/Berlin)' }) description!: string;
  @ApiProperty({ type: [String] }) next!: string[];
}
