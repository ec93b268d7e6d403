import { HttpStatus } from '@nestjs/common';
import { ProblemException, PROBLEM_TYPES } from '../common/problem-details';

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

/** Coded domain error of McpModule, mapped to HTTP once (toHttpException). Messages are user-facing, secret-free. */
export class McpError extends Error {
  constructor(
    readonly code: McpErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/** permission → 403, conflict → 409, not found → 404, validation → 422, any other MCP error → 400 (spec §3.4). */
export function mcpErrorStatus(code: McpErrorCode): number {
  switch (code) {
    case 'permission':
      return HttpStatus.FORBIDDEN;
    case 'conflict':
      return HttpStatus.CONFLICT;
    case 'not_found':
      return HttpStatus.NOT_FOUND;
    case 'validation':
      return HttpStatus.UNPROCESSABLE_ENTITY;
    case 'connection':
    case 'storage':
      return HttpStatus.BAD_REQUEST;
  }
}

export function toHttpException(error: McpError): ProblemException {
  const status = mcpErrorStatus(error.code);
  if (error.code === 'validation') {
    return new ProblemException(status, error.message, {
      code: error.code,
      type: PROBLEM_TYPES.validation,
      errors: [{ field: error.field ?? 'body', message: error.message }],
    });
  }
  return new ProblemException(status, error.message, { code: error.code });
}

export const MCP_MESSAGES = {
  builtinReadOnly: 'built-in MCP servers are read-only',
  notFound: (name: string) => `MCP server not found: ${name}`,
  exists: (name: string) => `MCP server already exists: ${name}`,
} as const;
