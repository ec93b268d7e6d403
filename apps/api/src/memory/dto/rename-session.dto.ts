import { codePointLength, type RenameSessionRequest } from '@cashcode/contracts';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsString, ValidateBy } from 'class-validator';

export const SESSION_TITLE_MAX_CHARS = 200;

/**
 * PATCH /api/sessions/{chat_id} body (openspec sessions): the title is trimmed, must not be blank, ≤ 200 characters.
 */
export class RenameSessionDto implements RenameSessionRequest {
  @ApiProperty({
    example: 'Trip planning',
    description: `New title; surrounding whitespace is removed; 1–${SESSION_TITLE_MAX_CHARS} characters after trimming`,
    minLength: 1,
    maxLength: SESSION_TITLE_MAX_CHARS,
  })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString({ message: 'title must be a string' })
  @IsNotEmpty({ message: 'title must not be empty' })
  @ValidateBy({
    name: 'maxCodePoints',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || codePointLength(value) <= SESSION_TITLE_MAX_CHARS,
      defaultMessage: () => `title must be at most ${SESSION_TITLE_MAX_CHARS} characters`,
    },
  })
  title!: string;
}
