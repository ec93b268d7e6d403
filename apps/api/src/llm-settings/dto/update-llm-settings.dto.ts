import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { LLM_PROVIDERS, type LlmProvider, type LlmSelection, type UpdateLlmSettingsRequest } from '@cashcode/contracts';
import { Type } from 'class-transformer';
import { Allow, IsDefined, IsObject, IsOptional, ValidateNested } from 'class-validator';

/**
 * OpenAI-compatible connection fields. The pipe only rejects unknown fields here; the values (types,
 * URL rules, lengths) are checked by the service so that every message names its field as the spec words it.
 */
export class OpenAiCompatibleSettingsDto {
  @ApiPropertyOptional({
    description:
      'Base URL of the OpenAI-compatible API, including any path such as `/v1`. Trimmed; empty disables the ' +
      'provider; http(s) only, no credentials, query or fragment; at most 2048 characters; trailing `/` removed.',
    example: 'https://api.deepseek.com',
    default: '',
    maxLength: 2048,
  })
  @Allow()
  base_url?: string;

  @ApiPropertyOptional({
    description:
      'A new API key (stored trimmed, write-only: never returned), bound to the origin (scheme, host, port) of ' +
      '`base_url`. Missing, null or blank keeps the stored key while `base_url` stays on the origin the key is bound ' +
      'to; a `base_url` on another origin then answers 422 on this field (enter the key again, or set ' +
      '`clear_api_key`). At most 16384 characters.',
    type: String,
    nullable: true,
    example: 'sk-...',
    maxLength: 16384,
  })
  @Allow()
  api_key?: string | null;

  @ApiPropertyOptional({
    description: 'Remove the stored API key. Cannot be combined with a non-blank `api_key`.',
    default: false,
  })
  @Allow()
  clear_api_key?: boolean;
}

/** Ollama connection fields. */
export class OllamaSettingsDto {
  @ApiPropertyOptional({
    description:
      'Base URL of the Ollama server. Trimmed; empty disables the provider; a trailing `/v1` or `/` is removed ' +
      '(the server calls `<base>/v1`).',
    example: 'http://127.0.0.1:11434',
    default: '',
    maxLength: 2048,
  })
  @Allow()
  base_url?: string;
}

/** Anthropic connection fields (additive). */
export class AnthropicSettingsDto {
  @ApiPropertyOptional({
    description:
      'Base URL of the Anthropic API (a proxy may add a path); a trailing `/v1` or `/` is removed (the SDK calls ' +
      '`<base>/v1/messages`). Empty with an API key: the public API, https://api.anthropic.com.',
    example: 'https://api.anthropic.com',
    default: '',
    maxLength: 2048,
  })
  @Allow()
  base_url?: string;

  @ApiPropertyOptional({
    description:
      'A new API key (write-only), bound to the origin of the base URL like `openai_compatible.api_key`; missing, ' +
      'null or blank keeps the stored key on its origin. Anthropic needs a key: without one the provider is not ready.',
    type: String,
    nullable: true,
    example: 'sk-ant-...',
    maxLength: 16384,
  })
  @Allow()
  api_key?: string | null;

  @ApiPropertyOptional({ description: 'Remove the stored API key. Cannot be combined with a non-blank `api_key`.', default: false })
  @Allow()
  clear_api_key?: boolean;
}

/** The model background jobs (Dream) use (CashCode addition). */
export class BackgroundModelDto implements LlmSelection {
  @ApiProperty({ enum: LLM_PROVIDERS, description: 'a provider that these settings make ready' })
  provider!: LlmProvider;

  @ApiProperty({ example: 'deepseek-chat', description: 'model id (trimmed, 1–256 characters)', maxLength: 256 })
  model!: string;
}

/** Body of `PUT /api/settings/llm`: both objects are required; unknown fields are rejected. */
export class UpdateLlmSettingsDto implements UpdateLlmSettingsRequest {
  @ApiProperty({ type: OpenAiCompatibleSettingsDto })
  @IsDefined({ message: 'is required' })
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => OpenAiCompatibleSettingsDto)
  openai_compatible!: OpenAiCompatibleSettingsDto;

  @ApiProperty({ type: OllamaSettingsDto })
  @IsDefined({ message: 'is required' })
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => OllamaSettingsDto)
  ollama!: OllamaSettingsDto;

  @ApiPropertyOptional({
    type: AnthropicSettingsDto,
    description: 'additive: the Anthropic connection. Omitted keeps the stored one as it is.',
  })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested()
  @Type(() => AnthropicSettingsDto)
  anthropic?: AnthropicSettingsDto;

  @ApiPropertyOptional({
    type: BackgroundModelDto,
    nullable: true,
    description:
      'The model Dream (long-term memory distillation) uses. Omitted keeps the stored choice; null clears it (Dream ' +
      'then uses the last model a turn used). The provider must be ready in the saved settings.',
  })
  @Allow()
  background?: BackgroundModelDto | null;
}
