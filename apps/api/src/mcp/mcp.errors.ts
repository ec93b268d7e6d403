import { HttpStatus } from '@nestjs/common';
import { DomainError, type DomainProblem, validationProblem } from '../common/domain-error';

export type McpErrorCode =
  /** a built-in (read-only) server cannot be changed */
  | 'permission'
  /** a server with that name exists */
  | 'conflict'
  /** no such server */
  | 'not_found'
  /** a submitted field is invalid (message names the rule, field names the field) */
  | 'validation'
  /** a connection could not be prepared (per-turn selection) */
  | 'connection'
  /** the user catalog could not be written */
  | 'storage';

/**
 * Coded domain error of McpModule; its HTTP problem is chosen once (mcpProblem) and rendered by the global
 * problem-details filter. Messages are user-facing, secret-free.
 */
export class McpError extends DomainError<McpErrorCode> {
  constructor(
    code: McpErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(code, message, mcpProblem(code, message, field));
  }
}

/** permission → 403, conflict → 409, not found → 404, validation → 422, any other MCP error → 400 (openspec mcp). */
function mcpProblem(code: McpErrorCode, message: string, field: string | undefined): DomainProblem {
  switch (code) {
    case 'permission':
      return { status: HttpStatus.FORBIDDEN };
    case 'conflict':
      return { status: HttpStatus.CONFLICT };
    case 'not_found':
      return { status: HttpStatus.NOT_FOUND };
    case 'validation':
      return validationProblem([{ field: field ?? 'body', message }]);
    case 'connection':
    case 'storage':
      return { status: HttpStatus.BAD_REQUEST };
  }
}

export const MCP_MESSAGES = {
  builtinReadOnly: 'built-in MCP servers are read-only',
  notFound: (name: string) => `MCP server not found: ${name}`,
  exists: (name: string) => `MCP server already exists: ${name}`,
} as const;
