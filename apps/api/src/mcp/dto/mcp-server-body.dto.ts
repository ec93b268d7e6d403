import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import type { CreateMcpServerRequest, McpUserTransportType, UpdateMcpServerRequest } from '@cashcode/contracts';

/**
 * Body of `PUT /api/mcp/servers/{name}`. Only the listed fields are accepted (others → 422 from the global
 * ValidationPipe); the rules themselves (in order, with their exact messages) are applied by McpService.
 */
export class UpdateMcpServerDto implements UpdateMcpServerRequest {
  @Allow()
  @ApiPropertyOptional({ enum: ['sse', 'streamable_http'], default: 'sse', description: 'network transport' })
  type?: McpUserTransportType;

  @Allow()
  @ApiProperty({ example: 'Weather', description: 'trimmed, 1–100 characters' })
  display_name!: string;

  @Allow()
  @ApiPropertyOptional({ example: '', description: 'trimmed, at most 1000 characters' })
  description?: string;

  @Allow()
  @ApiProperty({ example: 'http://127.0.0.1:8090/sse', description: 'absolute http(s) URL without credentials, ≤ 2048' })
  url!: string;

  @Allow()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { Authorization: 'Bearer …' },
    description:
      'at most 32 headers (RFC 7230 token names, values 1–4096 characters without newlines). On update, the value ' +
      '`********` keeps the stored value of that header while the URL stays on the same origin (scheme, host, ' +
      'port; otherwise 422 on `headers.<name>`: enter the value again); headers not listed are dropped.',
  })
  headers?: Record<string, string>;
}

/** Body of `POST /api/mcp/servers`. */
export class CreateMcpServerDto extends UpdateMcpServerDto implements CreateMcpServerRequest {
  @Allow()
  @ApiProperty({ example: 'weather', description: '^[a-z0-9][a-z0-9_-]{0,63}$ after trimming' })
  name!: string;
}
