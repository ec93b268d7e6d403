import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import type { CreateMcpServerRequest, McpImportRequest, McpUserTransportType, UpdateMcpServerRequest } from '@cashcode/contracts';

/**
 * Body of `PUT /api/mcp/servers/{name}`. Only the listed fields are accepted (others → 422 from the global
 * ValidationPipe); the rules themselves (in order, with their exact messages) are applied by McpServers (mcp-servers.ts).
 */
export class UpdateMcpServerDto implements UpdateMcpServerRequest {
  @Allow()
  @ApiPropertyOptional({
    enum: ['stdio', 'sse', 'streamable_http', 'http'],
    description: '`http` means streamable_http; default `stdio` when `command` is given, else `sse`',
  })
  type?: McpUserTransportType;

  @Allow()
  @ApiPropertyOptional({ example: 'Weather', description: 'trimmed, 1–100 characters; default: the name' })
  display_name!: string;

  @Allow()
  @ApiPropertyOptional({ example: '', description: 'trimmed, at most 1000 characters' })
  description?: string;

  @Allow()
  @ApiPropertyOptional({
    example: 'http://127.0.0.1:8090/sse',
    description: 'network transports: absolute http(s) URL without credentials, ≤ 2048',
  })
  url!: string;

  @Allow()
  @ApiPropertyOptional({
    example: 'npx',
    description: 'stdio: the program to run on this machine (non-empty, no NUL; `node` is the Node binary of CashCode)',
  })
  command?: string;

  @Allow()
  @ApiPropertyOptional({ type: [String], example: ['-y', '@modelcontextprotocol/server-memory'], description: 'stdio' })
  args?: string[];

  @Allow()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { API_KEY: '…' },
    description:
      'stdio: variables added to a safe baseline (PATH, HOME, LANG, TMPDIR…; never CashCode\'s own). Secrets: ' +
      'returned as `********`; on update `********` keeps the stored value while command and args are unchanged ' +
      '(otherwise 422 on `env.<NAME>`).',
  })
  env?: Record<string, string>;

  @Allow()
  @ApiPropertyOptional({ example: '/home/me/project', description: 'stdio: absolute path of an existing directory' })
  cwd?: string;

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

/** Body of `POST /api/mcp/servers/import`. */
export class ImportMcpServersDto implements McpImportRequest {
  @Allow()
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } },
    description: 'the configuration as the client stores it: `{"mcpServers": {…}}` or `{"servers": {…}}`',
  })
  config!: Record<string, unknown>;
}
