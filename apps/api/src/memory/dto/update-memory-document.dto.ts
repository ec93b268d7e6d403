import { ApiProperty } from '@nestjs/swagger';
import type { UpdateMemoryDocumentRequest } from '@cashcode/contracts';
import { IsString, Matches, MaxLength } from 'class-validator';

/** MEMORY.md / SOUL.md are injected into every system prompt: keep them far below a model's context. */
export const MEMORY_DOCUMENT_MAX_CHARS = 200_000;

/** Body of `PUT /api/memory` and `PUT /api/memory/soul`. */
export class UpdateMemoryDocumentDto implements UpdateMemoryDocumentRequest {
  @ApiProperty({
    description: `The new file content (stored as sent; empty is allowed). At most ${MEMORY_DOCUMENT_MAX_CHARS} characters.`,
    example: '# Preferences\n- The user prefers metric units\n',
    maxLength: MEMORY_DOCUMENT_MAX_CHARS,
  })
  @IsString({ message: 'content must be a string' })
  @MaxLength(MEMORY_DOCUMENT_MAX_CHARS, { message: `content must be at most ${MEMORY_DOCUMENT_MAX_CHARS} characters` })
  content!: string;

  @ApiProperty({
    description: 'The `hash` of the version this edit is based on (from the last GET or PUT). 409 when the file changed since.',
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    pattern: '^[0-9a-f]{64}$',
  })
  @IsString({ message: 'hash must be a string' })
  @Matches(/^[0-9a-f]{64}$/, { message: 'hash must be 64 lowercase hexadecimal characters' })
  hash!: string;
}
