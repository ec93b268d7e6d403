import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { SKILL_AVAILABILITIES, SKILL_SOURCES, type SkillAvailability, type SkillSource } from '@cashcode/contracts';

export const SKILL_PAGE_SIZE_MAX = 200;
export const SKILL_PAGE_SIZE_DEFAULT = 50;

const TRUE_VALUES = new Set(['true', '1', 'yes', 'on']);
const FALSE_VALUES = new Set(['false', '0', 'no', 'off']);

/** Query of `GET /api/skills` (openspec skills). */
export class ListSkillsQueryDto {
  @ApiPropertyOptional({ enum: SKILL_SOURCES })
  @IsOptional()
  @IsIn(SKILL_SOURCES, { message: `source must be one of ${SKILL_SOURCES.join(', ')}` })
  source?: SkillSource;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    const text = value.trim().toLowerCase();
    return TRUE_VALUES.has(text) ? true : FALSE_VALUES.has(text) ? false : value;
  })
  @IsBoolean({ message: 'enabled must be a boolean' })
  enabled?: boolean;

  @ApiPropertyOptional({ enum: SKILL_AVAILABILITIES })
  @IsOptional()
  @IsIn(SKILL_AVAILABILITIES, { message: `availability must be one of ${SKILL_AVAILABILITIES.join(', ')}` })
  availability?: SkillAvailability;

  @ApiPropertyOptional({ description: 'BM25 search over name, display name, description, tags and triggers (disabled Skills included)' })
  @IsOptional()
  @IsString({ message: 'query must be a string' })
  query?: string;

  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'page must be an integer' })
  @Min(1, { message: 'page must be at least 1' })
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: SKILL_PAGE_SIZE_MAX, default: SKILL_PAGE_SIZE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'page_size must be an integer' })
  @Min(1, { message: `page_size must be between 1 and ${SKILL_PAGE_SIZE_MAX}` })
  @Max(SKILL_PAGE_SIZE_MAX, { message: `page_size must be between 1 and ${SKILL_PAGE_SIZE_MAX}` })
  page_size?: number;
}
