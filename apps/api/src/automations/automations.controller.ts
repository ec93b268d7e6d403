import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { API_PATHS, type Automation, type AutomationRunResponse, type AutomationRunsPage, type AutomationsResponse, type SchedulePreviewResponse } from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { AutomationError } from './automations.errors';
import { AutomationsService } from './automations.service';
import {
  AutomationDto,
  AutomationInputDto,
  AutomationRunResponseDto,
  AutomationRunsPageDto,
  AutomationsResponseDto,
  SchedulePreviewRequestDto,
  SchedulePreviewResponseDto,
} from './dto/automation.dto';

/** `/api/automations`: the owner's scheduled prompts and their runs (openspec automations). */
@ApiTags('automations')
@Controller(API_PATHS.automations)
export class AutomationsController {
  constructor(private readonly automations: AutomationsService) {}

  @Get()
  @ApiOperation({ summary: 'Every automation with its next run and last run' })
  @ApiOkResponse({ type: AutomationsResponseDto })
  list(): AutomationsResponse {
    return { automations: this.automations.list() };
  }

  @Post()
  @ApiOperation({ summary: 'Create an automation', description: 'Saved before the answer; its first due time is planned at once.' })
  @ApiBody({ type: AutomationInputDto })
  @ApiCreatedResponse({ type: AutomationDto })
  @ApiProblemResponses(422, 503)
  create(@Body() body: unknown): Promise<Automation> {
    return this.automations.create(body, 'owner');
  }

  @Post('preview')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'A schedule in words and its next five due times' })
  @ApiBody({ type: SchedulePreviewRequestDto })
  @ApiOkResponse({ type: SchedulePreviewResponseDto })
  @ApiProblemResponses(422)
  preview(@Body() body: unknown): SchedulePreviewResponse {
    return this.automations.preview(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One automation' })
  @ApiOkResponse({ type: AutomationDto })
  @ApiProblemResponses(404)
  get(@Param('id') id: string): Automation {
    return this.automations.get(id);
  }

  @Put(':id')
  @ApiOperation({ summary: 'Replace the editable fields of an automation' })
  @ApiBody({ type: AutomationInputDto })
  @ApiOkResponse({ type: AutomationDto })
  @ApiProblemResponses(404, 422, 503)
  replace(@Param('id') id: string, @Body() body: unknown): Promise<Automation> {
    return this.automations.replace(id, body);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete an automation and its run history (its chats stay)' })
  @ApiNoContentResponse()
  @ApiProblemResponses(404, 503)
  async remove(@Param('id') id: string): Promise<void> {
    await this.automations.delete(id);
  }

  @Post(':id/run')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({ summary: 'Run now', description: '409 `automation_running` while a run of it is going.' })
  @ApiAcceptedResponse({ type: AutomationRunResponseDto })
  @ApiProblemResponses(404, 409)
  async run(@Param('id') id: string): Promise<AutomationRunResponse> {
    return { run: await this.automations.runNow(id) };
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'The runs of an automation, newest first, in pages' })
  @ApiQuery({ name: 'limit', required: false, description: 'runs per page, 1–200 (default 50)' })
  @ApiQuery({ name: 'before', required: false, description: '`next_before` of the previous page' })
  @ApiOkResponse({ type: AutomationRunsPageDto })
  @ApiProblemResponses(404, 422)
  runs(@Param('id') id: string, @Query('limit') limit?: string, @Query('before') before?: string): Promise<AutomationRunsPage> {
    const size = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > 200) {
      throw new AutomationError('invalid_automation', 'limit: must be a whole number from 1 to 200', [{ field: 'limit', message: 'must be a whole number from 1 to 200' }]);
    }
    if (before !== undefined && !/^r[0-9a-z]{15}$/.test(before)) {
      throw new AutomationError('invalid_automation', 'before: not a run id', [{ field: 'before', message: 'must be the next_before of a page' }]);
    }
    return this.automations.runs(id, size, before ?? null);
  }
}
