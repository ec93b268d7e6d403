import { applyDecorators, HttpException, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ProblemDetails, ProblemFieldError } from '@cashcode/contracts';
import { STATUS_CODES } from 'node:http';

/** The error body shapes are the shared contracts' (one definition for the API and the console). */
export type { ProblemDetails, ProblemFieldError };

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Problem type URIs this server uses besides `about:blank` (RFC 9457 problem types). */
export const PROBLEM_TYPES = {
  validation: 'urn:cashcode:problem:validation-error',
} as const;

export class ProblemFieldErrorDto implements ProblemFieldError {
  @ApiProperty({ example: 'title', description: 'dotted path of the offending field' })
  field!: string;

  @ApiProperty({ example: 'title must be a string' })
  message!: string;
}

/** OpenAPI schema of every error body (`application/problem+json`). */
export class ProblemDetailsDto implements ProblemDetails {
  @ApiProperty({ example: 'about:blank', description: 'problem type URI; `about:blank` when the status says it all' })
  type!: string;

  @ApiProperty({ example: 'Not Found', description: 'short summary of the problem type (the HTTP status phrase)' })
  title!: string;

  @ApiProperty({ example: 404 })
  status!: number;

  @ApiProperty({ example: 'Session not found', description: 'human-readable explanation (the reference `detail`)' })
  detail!: string;

  @ApiPropertyOptional({ example: '/api/sessions/abc', description: 'the request path (no query string)' })
  instance?: string;

  @ApiPropertyOptional({ example: '3f2b9c1d0e8a4b7c9d6e5f4a3b2c1d0e', description: 'same as the X-Request-ID header' })
  requestId?: string;

  @ApiPropertyOptional({ type: [ProblemFieldErrorDto], description: 'per-field messages of a validation error' })
  errors?: ProblemFieldErrorDto[];

  @ApiPropertyOptional({ example: 'skill_not_found', description: 'machine-readable code of a domain error' })
  code?: string;
}

export function statusTitle(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/**
 * An HttpException whose body is already a problem. Domain-error mappers may throw it to choose `type`/`code`;
 * a plain `new NotFoundException('Session not found')` works too (its message becomes `detail`).
 */
export class ProblemException extends HttpException {
  constructor(
    status: number,
    detail: string,
    extra: { type?: string; code?: string; errors?: ProblemFieldError[]; title?: string } = {},
  ) {
    super({ detail, ...extra }, status);
  }
}

/** 422 with per-field `errors`; thrown by the global ValidationPipe and usable by WS/REST code with its own checks. */
export class RequestValidationException extends ProblemException {
  constructor(errors: ProblemFieldError[], detail?: string) {
    super(HttpStatus.UNPROCESSABLE_ENTITY, detail ?? errors.map((e) => `${e.field}: ${e.message}`).join('; '), {
      type: PROBLEM_TYPES.validation,
      errors,
    });
  }
}

/**
 * Documents error responses as `application/problem+json` with the shared ProblemDetails schema, e.g.
 * `@ApiProblemResponses(404, 422)` on a handler or a controller.
 */
export function ApiProblemResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDetailsDto, ProblemFieldErrorDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: statusTitle(status),
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDetailsDto) } } },
      }),
    ),
  );
}
