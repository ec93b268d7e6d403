import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_DREAM_RUNS } from '../dream-store';

/** Query of `GET /api/memory/dreams`. */
export class ListDreamsQueryDto {
  @ApiPropertyOptional({ description: 'most runs to return (newest first)', minimum: 1, maximum: MAX_DREAM_RUNS, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${MAX_DREAM_RUNS}` })
  @Max(MAX_DREAM_RUNS, { message: `limit must be between 1 and ${MAX_DREAM_RUNS}` })
  limit?: number;
}
