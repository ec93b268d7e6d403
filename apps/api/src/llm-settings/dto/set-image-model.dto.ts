import { ApiProperty } from '@nestjs/swagger';
import { LLM_PROVIDERS, type LlmProvider, type SetImageModelRequest } from '@cashcode/contracts';
import { IsBoolean, IsIn, IsString, Matches, MaxLength } from 'class-validator';

/** Body of `PUT /api/settings/llm/image-models`. */
export class SetImageModelDto implements SetImageModelRequest {
  @ApiProperty({ enum: LLM_PROVIDERS })
  @IsIn(LLM_PROVIDERS, { message: 'must be one of: openai_compatible, ollama' })
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
