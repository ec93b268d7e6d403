import { SESSION_EXPORT_FORMATS, type SessionExportFormat } from '@cashcode/contracts';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

/** Query of `GET /api/sessions/{chat_id}/export` (openspec sessions "Requirement: Export"). */
export class ExportSessionQueryDto {
  @ApiPropertyOptional({ enum: SESSION_EXPORT_FORMATS, default: 'markdown', description: 'markdown or json' })
  @IsOptional()
  @IsIn(SESSION_EXPORT_FORMATS, { message: `format must be one of ${SESSION_EXPORT_FORMATS.join(', ')}` })
  format?: SessionExportFormat;
}
