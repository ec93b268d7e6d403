import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Get, HttpCode, HttpStatus, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type {
  ImageModelsResponse,
  LlmModelsResponse,
  PublicLlmSettings,
  TestLlmConnectionResponse,
  ThinkingModelsResponse,
} from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { SetImageModelDto, SetThinkingModelDto } from './dto/set-image-model.dto';
import {
  ImageModelsResponseDto,
  LlmModelsResponseDto,
  PublicLlmSettingsDto,
  TestLlmConnectionResponseDto,
  ThinkingModelsResponseDto,
} from './dto/llm-settings-response.dto';
import { TestLlmConnectionDto } from './dto/test-llm-connection.dto';
import { UpdateLlmSettingsDto } from './dto/update-llm-settings.dto';
import { LlmOriginGuard } from './llm-origin.guard';
import { LlmSettingsService } from './llm-settings.service';

/** `/api/settings/llm`: read and save the provider connections, test a draft, list the models. */
@ApiTags('llm-settings')
@Controller(API_PATHS.llmSettings)
export class LlmSettingsController {
  constructor(private readonly settings: LlmSettingsService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the LLM settings',
    description: 'The public settings; the API key is never returned (only `api_key_configured`).',
  })
  @ApiOkResponse({ type: PublicLlmSettingsDto })
  @ApiProblemResponses(503)
  getSettings(): PublicLlmSettings {
    return this.settings.getPublicSettings();
  }

  @Put()
  @UseGuards(LlmOriginGuard)
  @ApiOperation({
    summary: 'Save the LLM settings',
    description:
      'Validates and normalises the connections, requires at least one ready provider, writes the settings file ' +
      'atomically (0600) and installs new provider clients; turns in flight keep their client until they finish. ' +
      'A missing, null or blank `api_key` keeps the stored key, but only on the origin it was entered for: a ' +
      '`base_url` on another origin answers 422 on `openai_compatible.api_key`; `clear_api_key` removes it.',
  })
  @ApiBody({ type: UpdateLlmSettingsDto })
  @ApiOkResponse({ type: PublicLlmSettingsDto })
  @ApiProblemResponses(403, 422, 503)
  updateSettings(@Body() body: UpdateLlmSettingsDto): Promise<PublicLlmSettings> {
    return this.settings.updateSettings(body);
  }

  @Post('test')
  @HttpCode(HttpStatus.OK)
  @UseGuards(LlmOriginGuard)
  @ApiOperation({
    summary: 'Test a provider connection',
    description:
      'Lists the models of one provider of the submitted draft (15 s timeout). Nothing is saved. 400 with a ' +
      'sanitised message when the listing fails; 422 when the draft is invalid or the provider is not ready in it.',
  })
  @ApiBody({ type: TestLlmConnectionDto })
  @ApiOkResponse({ type: TestLlmConnectionResponseDto })
  @ApiProblemResponses(400, 403, 422)
  testConnection(@Body() body: TestLlmConnectionDto): Promise<TestLlmConnectionResponse> {
    return this.settings.testConnection(body);
  }

  @Get('models')
  @UseGuards(LlmOriginGuard)
  @ApiOperation({
    summary: 'List the models of the saved providers',
    description:
      'Lists every ready provider concurrently (openai_compatible first, then ollama, then anthropic); a failing provider ' +
      'contributes no models and a sanitised `error`.',
  })
  @ApiOkResponse({ type: LlmModelsResponseDto })
  @ApiProblemResponses(403, 503)
  listModels(): Promise<LlmModelsResponse> {
    return this.settings.listModels();
  }

  @Put('image-models')
  @UseGuards(LlmOriginGuard)
  @ApiOperation({
    summary: 'Mark a model as taking image input',
    description:
      'For models whose provider listing does not say they take images: `accepts_images: true` sends image ' +
      'attachments to that model as image parts, `false` removes the mark. Saved with the settings (atomically, 0600).',
  })
  @ApiBody({ type: SetImageModelDto })
  @ApiOkResponse({ type: ImageModelsResponseDto })
  @ApiProblemResponses(403, 422, 503)
  setImageModel(@Body() body: SetImageModelDto): Promise<ImageModelsResponse> {
    return this.settings.setImageModel(body);
  }

  @Put('thinking-models')
  @UseGuards(LlmOriginGuard)
  @ApiOperation({
    summary: 'Turn extended thinking on or off for a model',
    description:
      'A per-model setting: `thinking: true` lets the model think before it answers (Anthropic extended thinking, ' +
      'with a thinking budget; its thinking is shown collapsed, never in the answer). Saved with the settings.',
  })
  @ApiBody({ type: SetThinkingModelDto })
  @ApiOkResponse({ type: ThinkingModelsResponseDto })
  @ApiProblemResponses(403, 422, 503)
  setThinkingModel(@Body() body: SetThinkingModelDto): Promise<ThinkingModelsResponse> {
    return this.settings.setThinkingModel(body);
  }
}
