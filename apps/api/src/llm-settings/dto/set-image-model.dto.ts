import { ApiProperty } from '@nestjs/swagger';
import { LLM_PROVIDERS, type LlmProvider, type SetImageModelRequest, type SetThinkingModelRequest } from '@cashcode/contracts';
import { IsBoolean, IsIn, IsString, Matches, MaxLength } from 'class-validator';

/** Body of `PUT /api/settings/llm/image-models`. */
export class SetImageModelDto implements SetImageModelRequest {
  @ApiProperty({ enum: LLM_PROVIDERS })
  @IsIn(LLM_PROVIDERS, { message: 'must be one of: openai_compatible, ollama, anthropic' })
  provider!: LlmProvider;

  @ApiProperty({ example: 'llava:13b', description: 'the model id (trimmed, 1–256 characters)' })
  @IsString({ message: 'must be a string' })
  @Matches(/\S/, { message: 'must not be blank' })
  @MaxLength(256, { message: 'must be at most 256 characters' })
  model!: string;

  @ApiProperty({ description: 'true: send image attachments to this model as image parts; false: remove the mark' })
  @IsBoolean({ message: 'must be a boolean' })
  accepts_images!: boolean;
}

/** Body of `PUT /api/settings/llm/thinking-models` (additive). */
export class SetThinkingModelDto implements SetThinkingModelRequest {
  @ApiProperty({ enum: LLM_PROVIDERS })
  @IsIn(LLM_PROVIDERS, { message: 'must be one of: openai_compatible, ollama, anthropic' })
  provider!: LlmProvider;

  @ApiProperty({ example: 'claude-sonnet-4-5', description: 'the model id (trimmed, 1–256 characters)' })
  @IsString({ message: 'must be a string' })
  @Matches(/\S/, { message: 'must not be blank' })
  @MaxLength(256, { message: 'must be at most 256 characters' })
  model!: string;

  @ApiProperty({ description: 'true: the model thinks before it answers (Anthropic extended thinking); false: it does not' })
  @IsBoolean({ message: 'must be a boolean' })
  thinking!: boolean;
}
