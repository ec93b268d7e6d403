import type { BackupRequest } from '@cashcode/contracts';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';

export class BackupRequestDto implements BackupRequest {
  @ApiPropertyOptional({
    description:
      'include the secrets (LLM API keys, the API token, MCP credentials and headers); the archive is owner-only either way',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  include_secrets?: boolean;
}
