import { ApiProperty } from '@nestjs/swagger';
import { LLM_PROVIDERS, type LlmProvider, type TestLlmConnectionRequest } from '@cashcode/contracts';
import { IsIn } from 'class-validator';
import { UpdateLlmSettingsDto } from './update-llm-settings.dto';

/** Body of `POST /api/settings/llm/test`: a settings draft (as for PUT) plus the provider to probe. */
export class TestLlmConnectionDto extends UpdateLlmSettingsDto implements TestLlmConnectionRequest {
  @ApiProperty({ enum: LLM_PROVIDERS, description: 'which connection of the draft to test' })
  @IsIn(LLM_PROVIDERS, { message: 'must be one of: openai_compatible, ollama, anthropic' })
  provider!: LlmProvider;
}
