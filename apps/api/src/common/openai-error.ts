/**
 * Errors of the OpenAI-compatible endpoint, in the OpenAI format (`{"error": {"message", "type", "param", "code"}}`)
 * with the HTTP status OpenAI uses for the same problem, so OpenAI clients (the `openai` SDK's AuthenticationError,
 * NotFoundError, RateLimitError, …) recognise them. Nothing under `/v1` answers problem+json.
 */
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { formatEvent } from './log-format';
import { UNHANDLED_ERROR_TYPE } from './problem-details.filter';

export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'upstream_error';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

/** A failed `/v1` request: its status, OpenAI error type, stable `code` and a clear English message. */
export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    readonly type: OpenAiErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'OpenAiError';
  }

  body(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 `invalid_request_error` about one request field. */
export function invalidRequest(code: string, message: string, param: string | null = null): OpenAiError {
  return new OpenAiError(HttpStatus.BAD_REQUEST, 'invalid_request_error', code, message, param);
}

/** The default type of a status (for errors raised before the endpoint's own code runs). */
export function typeForStatus(status: number): OpenAiErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Writes an OpenAI error response (JSON, no-store) unless the response has already started. */
export function sendOpenAiError(res: Response, error: OpenAiError): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).setHeader('Cache-Control', 'no-store').json(error.body());
}

/** The OpenAI error for an error raised around a `/v1` handler (body parsing, Nest exceptions, bugs). */
export function toOpenAiError(exception: unknown): OpenAiError {
  if (exception instanceof OpenAiError) return exception;
  const status =
    exception instanceof HttpException
      ? exception.getStatus()
      : typeof (exception as { status?: unknown })?.status === 'number' && (exception as { expose?: unknown }).expose === true
        ? ((exception as { status: number }).status)
        : 500;
  if (status === 413) return invalidRequestTooLarge();
  if (status >= 400 && status < 500) {
    const bodyType = (exception as { type?: unknown })?.type;
    if (bodyType === 'entity.parse.failed') {
      return invalidRequest('invalid_json', 'We could not parse the JSON body of your request: it is not valid JSON.');
    }
    const message = exception instanceof Error && exception.message !== '' ? exception.message : 'Bad request';
    return new OpenAiError(status, typeForStatus(status), 'invalid_request', message);
  }
  return new OpenAiError(500, 'server_error', 'internal_error', 'The server had an error while processing your request.');
}

function invalidRequestTooLarge(): OpenAiError {
  return new OpenAiError(HttpStatus.PAYLOAD_TOO_LARGE, 'invalid_request_error', 'request_too_large', 'The request body is too large.');
}

/** Exception filter of the `/v1` controller: every error leaves in the OpenAI format. */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('OpenAiCompat');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const error = toOpenAiError(exception);
    if (error.status >= 500 && !(exception instanceof OpenAiError)) {
      this.logger.error(
        formatEvent('openai.request.failed', { error_type: exception instanceof Error ? exception.name : typeof exception }),
      );
      res.locals[UNHANDLED_ERROR_TYPE] = exception instanceof Error ? exception.constructor.name : typeof exception;
    }
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    sendOpenAiError(res, error);
  }
}
