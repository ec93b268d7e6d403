import { CHAT_ID_PATTERN, type ChatUsage, type PriceTable, type SpendLimitSettings, type SpendLimitsStatus, type UsageRecordsPage, type UsageSummary } from '@cashcode/contracts';
import { Body, Controller, Get, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiProblemResponses } from '../common/problem-details';
import {
  ChatUsageDto,
  PriceTableDto,
  SpendLimitSettingsDto,
  SpendLimitsStatusDto,
  UsageRecordsPageDto,
  UsageSummaryDto,
} from './dto/usage.dto';
import { UsageError } from './usage.errors';
import { CSV_COLUMNS, csvRow, MAX_RANGE_DAYS, parseRange, parseRecordsQuery, type RawRecordsQuery } from './usage-query';
import { UsageService } from './usage.service';

const RANGE_QUERIES = [
  { name: 'from', required: false, description: 'first day, YYYY-MM-DD server-local (default: 29 days before `to`)' },
  { name: 'to', required: false, description: `last day, YYYY-MM-DD (default: today); at most ${MAX_RANGE_DAYS} days in all` },
];
const ApiRange = (): MethodDecorator => (target, key, descriptor) => {
  for (const query of RANGE_QUERIES) ApiQuery(query)(target, key, descriptor);
};

/** `/api/usage`: the model-call ledger, the price table and the spend limits (openspec usage). */
@ApiTags('usage')
@Controller('/api/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('summary')
  @ApiOperation({
    summary: 'Token and cost totals per day, provider, model and purpose',
    description: 'Grouped in the ledger; cost per currency of the priced calls, `unpriced_calls` counts the rest.',
  })
  @ApiRange()
  @ApiOkResponse({ type: UsageSummaryDto })
  @ApiProblemResponses(422)
  summary(@Query() query: Record<string, unknown>): UsageSummary {
    const range = parseRange(query, this.usage.now());
    return this.usage.summary(range.from, range.to);
  }

  @Get('records')
  @ApiOperation({ summary: 'The model calls, newest first, with filters and pages' })
  @ApiRange()
  @ApiQuery({ name: 'model', required: false })
  @ApiQuery({ name: 'purpose', required: false, enum: ['chat', 'api', 'consolidation', 'dream', 'title', 'evolution', 'connection_test', 'subagent'] })
  @ApiQuery({ name: 'chat_id', required: false })
  @ApiQuery({ name: 'limit', required: false, description: 'records per page, 1–1000 (default 100)' })
  @ApiQuery({ name: 'before', required: false, description: '`next_before` of the previous page' })
  @ApiOkResponse({ type: UsageRecordsPageDto })
  @ApiProblemResponses(422)
  records(@Query() query: RawRecordsQuery): UsageRecordsPage {
    return this.usage.records(parseRecordsQuery(query, this.usage.now()));
  }

  @Get('export.csv')
  @ApiOperation({
    summary: 'The model calls of a range as CSV (oldest first)',
    description:
      `A header row (${CSV_COLUMNS.join(', ')}), RFC 4180 quoting; text cells starting with = + - @ get a leading ` +
      'apostrophe so a spreadsheet does not run them as formulas.',
  })
  @ApiRange()
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'text/csv', schema: { type: 'string' } })
  @ApiProblemResponses(422)
  exportCsv(@Query() query: Record<string, unknown>, @Res() res: Response): void {
    const range = parseRange(query, this.usage.now());
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="cashcode-usage-${range.from}-${range.to}.csv"`);
    // written in pieces of 1000 rows: a year of calls is never one string in memory
    let lines: string[] = [CSV_COLUMNS.join(',')];
    for (const record of this.usage.iterateRecords(range.from, range.to)) {
      lines.push(csvRow(record));
      if (lines.length >= 1000) {
        res.write(`${lines.join('\r\n')}\r\n`);
        lines = [];
      }
    }
    res.end(lines.length > 0 ? `${lines.join('\r\n')}\r\n` : undefined);
  }

  @Get('chats/:chat_id')
  @ApiOperation({ summary: 'What one chat has cost so far (its calls still in the ledger)' })
  @ApiParam({ name: 'chat_id', description: '1–64 of A-Z a-z 0-9 _ : -' })
  @ApiOkResponse({ type: ChatUsageDto })
  @ApiProblemResponses(422)
  chat(@Param('chat_id') chatId: string): ChatUsage {
    if (!CHAT_ID_PATTERN.test(chatId)) {
      throw new UsageError('invalid_usage_query', 'chat_id: invalid chat id', [
        { field: 'chat_id', message: 'must be 1 to 64 characters of letters, digits, _, : and -' },
      ]);
    }
    return this.usage.chatUsage(chatId);
  }

  @Get('prices')
  @ApiOperation({ summary: 'The price table (empty until the user enters prices; nothing is shipped)' })
  @ApiOkResponse({ type: PriceTableDto })
  prices(): PriceTable {
    return this.usage.prices();
  }

  @Put('prices')
  @ApiOperation({
    summary: 'Replace the price table',
    description: 'Per provider and model, per million tokens; saved atomically (0600) next to the other settings.',
  })
  @ApiBody({ type: PriceTableDto })
  @ApiOkResponse({ type: PriceTableDto })
  @ApiProblemResponses(422, 503)
  setPrices(@Body() body: unknown): Promise<PriceTable> {
    return this.usage.setPrices(body);
  }

  @Get('limits')
  @ApiOperation({ summary: 'The spend limits and the warning share' })
  @ApiOkResponse({ type: SpendLimitSettingsDto })
  limits(): SpendLimitSettings {
    return this.usage.limits();
  }

  @Put('limits')
  @ApiOperation({
    summary: 'Replace the spend limits',
    description:
      'Per day or month, in tokens or money, global, per provider/model or for background work. Checked before ' +
      'every model call with its estimate; saved atomically (0600) next to the other settings.',
  })
  @ApiBody({ type: SpendLimitSettingsDto })
  @ApiOkResponse({ type: SpendLimitSettingsDto })
  @ApiProblemResponses(422, 503)
  setLimits(@Body() body: unknown): Promise<SpendLimitSettings> {
    return this.usage.setLimits(body);
  }

  @Get('limits/status')
  @ApiOperation({ summary: 'Each limit with its use, reservations and reset time in the current window' })
  @ApiOkResponse({ type: SpendLimitsStatusDto })
  limitsStatus(): SpendLimitsStatus {
    return this.usage.limitsStatus();
  }
}
