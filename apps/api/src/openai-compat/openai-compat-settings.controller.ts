import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put, UseGuards } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { CreatedOpenAiCompatKey, OpenAiCompatSettings } from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { LlmOriginGuard } from '../llm-settings/llm-origin.guard';
import {
  CreatedOpenAiCompatKeyDto,
  CreateOpenAiCompatKeyDto,
  OpenAiCompatSettingsDto,
  UpdateOpenAiCompatSettingsDto,
} from './dto/openai-compat-settings.dto';
import { OpenAiCompatSettingsError, OpenAiCompatSettingsService } from './openai-compat-settings.service';

const KEY_ID_PATTERN = /^[0-9a-f]{16}$/;

/** `/api/settings/openai-compat`: the OpenAI-compatible endpoint's switch, its options and its access keys. */
@ApiTags('openai-compat')
@Controller(API_PATHS.openAiCompat)
@UseGuards(LlmOriginGuard)
export class OpenAiCompatSettingsController {
  constructor(private readonly settings: OpenAiCompatSettingsService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the OpenAI-compatible API settings',
    description: 'Whether `/v1` is on, the model `cashcode` runs, the options and the keys (never their secrets).',
  })
  @ApiOkResponse({ type: OpenAiCompatSettingsDto })
  @ApiProblemResponses(403)
  get(): OpenAiCompatSettings {
    return this.settings.publicSettings();
  }

  @Put()
  @ApiOperation({
    summary: 'Change the OpenAI-compatible API settings',
    description: 'Every field is optional; the given ones are changed. Written atomically; a failed write changes nothing.',
  })
  @ApiBody({ type: UpdateOpenAiCompatSettingsDto })
  @ApiOkResponse({ type: OpenAiCompatSettingsDto })
  @ApiProblemResponses(403, 422, 503)
  update(@Body() body: UpdateOpenAiCompatSettingsDto): Promise<OpenAiCompatSettings> {
    return this.settings.update(body);
  }

  @Post('keys')
  @ApiOperation({
    summary: 'Create an access key for `/v1`',
    description:
      'A new random key (32 bytes, `cck_…`). The secret is in this response only; the server keeps its SHA-256 hash, ' +
      'the name, a prefix to recognise it and the created / last-used times.',
  })
  @ApiBody({ type: CreateOpenAiCompatKeyDto })
  @ApiCreatedResponse({ type: CreatedOpenAiCompatKeyDto })
  @ApiProblemResponses(403, 409, 422, 503)
  createKey(@Body() body: CreateOpenAiCompatKeyDto): Promise<CreatedOpenAiCompatKey> {
    return this.settings.createKey(body.name);
  }

  @Delete('keys/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revoke an access key', description: 'The key stops working at once.' })
  @ApiParam({ name: 'id', description: 'the key id (16 hex digits)' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiProblemResponses(403, 404, 503)
  async revokeKey(@Param('id') id: string): Promise<void> {
    if (!KEY_ID_PATTERN.test(id)) throw new OpenAiCompatSettingsError('key_not_found', `No key with id ${JSON.stringify(id.slice(0, 64))} exists.`);
    await this.settings.revokeKey(id);
  }
}
