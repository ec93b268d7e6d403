import { codePointLength, SESSION_SEARCH_LIMIT_MAX, SESSION_SEARCH_QUERY_MAX_CHARS } from '@cashcode/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, Min, ValidateBy } from 'class-validator';

/** Query of `GET /api/sessions/search` (openspec sessions "Requirement: Search"). */
export class SearchSessionsQueryDto {
  @ApiProperty({
    description: `words to find in titles and messages; trimmed; 1–${SESSION_SEARCH_QUERY_MAX_CHARS} characters`,
    example: 'capital',
    minLength: 1,
    maxLength: SESSION_SEARCH_QUERY_MAX_CHARS,
  })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString({ message: 'q must be a string' })
  @IsNotEmpty({ message: 'q must not be empty' })
  @ValidateBy({
    name: 'maxCodePoints',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || codePointLength(value) <= SESSION_SEARCH_QUERY_MAX_CHARS,
      defaultMessage: () => `q must be at most ${SESSION_SEARCH_QUERY_MAX_CHARS} characters`,
    },
  })
  q!: string;

  @ApiPropertyOptional({ description: 'most chats to return', minimum: 1, maximum: SESSION_SEARCH_LIMIT_MAX, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${SESSION_SEARCH_LIMIT_MAX}` })
  @Max(SESSION_SEARCH_LIMIT_MAX, { message: `limit must be between 1 and ${SESSION_SEARCH_LIMIT_MAX}` })
  limit?: number;
}
