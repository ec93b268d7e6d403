import { ApiProperty } from '@nestjs/swagger';
import {
  LLM_PROVIDERS,
  type ImageModelsResponse,
  type LlmModelEntry,
  type LlmModelsResponse,
  type LlmProvider,
  type LlmProviderStatus,
  type PublicLlmSettings,
  type TestLlmConnectionResponse,
  type ThinkingModelsResponse,
} from '@cashcode/contracts';
import { BackgroundModelDto } from './update-llm-settings.dto';

export class PublicOpenAiCompatibleSettingsDto {
  @ApiProperty({ example: 'https://api.deepseek.com', description: 'normalised base URL; empty when not set' })
  base_url!: string;

  @ApiProperty({ description: 'base URL and API key are both set' })
  ready!: boolean;

  @ApiProperty({ description: 'an API key is stored (the key itself is never returned)' })
  api_key_configured!: boolean;
}

export class PublicOllamaSettingsDto {
  @ApiProperty({ example: 'http://127.0.0.1:11434', description: 'normalised base URL (without `/v1`)' })
  base_url!: string;

  @ApiProperty({ description: 'base URL is set' })
  ready!: boolean;
}

export class PublicAnthropicSettingsDto {
  @ApiProperty({ example: 'https://api.anthropic.com', description: 'normalised base URL; empty when not set' })
  base_url!: string;

  @ApiProperty({ description: 'base URL and an API key bound to its origin are both set' })
  ready!: boolean;

  @ApiProperty({ description: 'an API key usable with the base URL is stored (the key itself is never returned)' })
  api_key_configured!: boolean;
}

/** The public settings: never contains the API key. */
export class PublicLlmSettingsDto implements PublicLlmSettings {
  @ApiProperty({ description: 'at least one provider is ready' })
  configured!: boolean;

  @ApiProperty({ type: PublicOpenAiCompatibleSettingsDto })
  openai_compatible!: PublicOpenAiCompatibleSettingsDto;

  @ApiProperty({ type: PublicOllamaSettingsDto })
  ollama!: PublicOllamaSettingsDto;

  @ApiProperty({ type: PublicAnthropicSettingsDto, description: 'additive: the Anthropic connection' })
  anthropic!: PublicAnthropicSettingsDto;

  @ApiProperty({
    type: [BackgroundModelDto],
    required: false,
    description: 'additive: models with extended thinking on (`PUT /api/settings/llm/thinking-models`); absent when none',
  })
  thinking_models?: BackgroundModelDto[];

  @ApiProperty({
    type: BackgroundModelDto,
    nullable: true,
    description: 'the model background jobs (Dream) use; null → the last model a turn used',
  })
  background!: BackgroundModelDto | null;

  @ApiProperty({
    type: [BackgroundModelDto],
    required: false,
    description: 'models marked as taking image input (`PUT /api/settings/llm/image-models`); absent when none is',
  })
  image_models?: BackgroundModelDto[];
}

export class ThinkingModelsResponseDto implements ThinkingModelsResponse {
  @ApiProperty({ type: [BackgroundModelDto], description: 'every model with extended thinking on' })
  thinking_models!: BackgroundModelDto[];
}

export class ImageModelsResponseDto implements ImageModelsResponse {
  @ApiProperty({ type: [BackgroundModelDto], description: 'every model marked as taking image input' })
  image_models!: BackgroundModelDto[];
}

export class TestLlmConnectionResponseDto implements TestLlmConnectionResponse {
  @ApiProperty({ enum: [true] })
  success!: true;

  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;

  @ApiProperty({ example: 3, description: 'number of models discovered (after de-duplication)' })
  model_count!: number;

  @ApiProperty({ example: 'Connected: found 3 models' })
  message!: string;

  @ApiProperty({
    type: [String],
    required: false,
    example: ['Fake-A', 'fake-b'],
    description: 'additive: the model ids found, de-duplicated; model_count is their number',
  })
  models?: string[];
}

export class LlmModelEntryDto implements LlmModelEntry {
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;

  @ApiProperty({ example: 'deepseek-chat' })
  id!: string;

  @ApiProperty({ required: false, description: 'true when the model takes image input (its listing says so, or it is marked in the settings); else absent' })
  accepts_images?: boolean;

  @ApiProperty({ required: false, description: "true when the provider's listing itself says the model takes image input; else absent" })
  images_reported?: boolean;
}

export class LlmProviderStatusDto implements LlmProviderStatus {
  @ApiProperty({ description: 'the saved settings make this provider usable' })
  ready!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Authentication failed: check the API key.',
    description: 'why listing this provider failed (sanitised); null when it succeeded or the provider is not ready',
  })
  error!: string | null;
}

export class LlmProvidersStatusDto implements Record<LlmProvider, LlmProviderStatus> {
  @ApiProperty({ type: LlmProviderStatusDto })
  openai_compatible!: LlmProviderStatusDto;

  @ApiProperty({ type: LlmProviderStatusDto })
  ollama!: LlmProviderStatusDto;

  @ApiProperty({ type: LlmProviderStatusDto, description: 'additive' })
  anthropic!: LlmProviderStatusDto;
}

export class LlmModelsResponseDto implements LlmModelsResponse {
  @ApiProperty({
    type: [LlmModelEntryDto],
    description: 'openai_compatible models first, then ollama, then anthropic; each sorted case-insensitively',
  })
  models!: LlmModelEntryDto[];

  @ApiProperty({ type: LlmProvidersStatusDto })
  providers!: LlmProvidersStatusDto;

  @ApiProperty({
    type: BackgroundModelDto,
    required: false,
    description: 'the model the last chat turn used (saved with the settings; a fresh browser preselects it); absent before the first turn',
  })
  last_used?: BackgroundModelDto;
}
