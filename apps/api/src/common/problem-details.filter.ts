import { isRecord } from '@cashcode/contracts';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError } from './domain-error';
import {
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  type ProblemFieldError,
  statusTitle,
} from './problem-details';
import { JSON_TOO_DEEP_ERROR_TYPE, MAX_JSON_DEPTH } from './json-limits';
import { REQUEST_ID_HEADER } from './request-id';

/** Errors of body-parser and similar http-errors (`expose: true`) mapped to fixed, safe messages. */
const HTTP_ERROR_DETAILS: Record<string, string> = {
  'entity.parse.failed': 'Malformed JSON request body',
  'entity.too.large': 'Request body is too large',
  [JSON_TOO_DEEP_ERROR_TYPE]: `JSON request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`,
  'encoding.unsupported': 'Unsupported request body encoding',
  'charset.unsupported': 'Unsupported request body charset',
  'request.aborted': 'Request aborted',
  'request.size.invalid': 'Request size did not match content length',
  'entity.verify.failed': 'Request body verification failed',
  'parameters.too.many': 'Too many parameters',
};

interface ProblemInit {
  status: number;
  detail: string;
  type?: string;
  title?: string;
  errors?: ProblemFieldError[];
  code?: string;
  extensions?: Readonly<Record<string, unknown>>;
}

const STANDARD_PROBLEM_MEMBERS = new Set(['type', 'title', 'status', 'detail', 'instance', 'requestId', 'code', 'errors']);

function isFieldErrors(value: unknown): value is ProblemFieldError[] {
  return (
    Array.isArray(value) &&
    value.every((e) => isRecord(e) && typeof e['field'] === 'string' && typeof e['message'] === 'string')
  );
}

function fromHttpException(exception: HttpException): ProblemInit {
  const status = exception.getStatus();
  const body = exception.getResponse();
  if (typeof body === 'string') return { status, detail: body };
  if (!isRecord(body)) return { status, detail: exception.message || statusTitle(status) };
  let detail: string;
  if (typeof body['detail'] === 'string') detail = body['detail'];
  else if (typeof body['message'] === 'string') detail = body['message'];
  else if (Array.isArray(body['message'])) detail = body['message'].map(String).join('; ');
  else detail = statusTitle(status);
  return {
    status,
    detail,
    type: typeof body['type'] === 'string' ? body['type'] : undefined,
    title: typeof body['title'] === 'string' ? body['title'] : undefined,
    code: typeof body['code'] === 'string' ? body['code'] : undefined,
    errors: isFieldErrors(body['errors']) ? body['errors'] : undefined,
  };
}

/**
 * Maps anything thrown to a problem init, or undefined for an unexpected error (→ 500 with a generic detail).
 * Besides HttpException it understands:
 * - coded domain errors (DomainError): their `problem` (status, code, type, errors), their `message` as detail;
 * - body-parser / http-errors errors (`expose: true`, `status` 4xx, `type` like `entity.parse.failed`);
 * - other errors exposing a numeric `httpStatus` (400–599), their `message` as detail and an optional `code`.
 */
export function toProblemInit(exception: unknown): ProblemInit | undefined {
  if (exception instanceof HttpException) {
    const init = fromHttpException(exception);
    // Nest's router 404 ("Cannot GET /x") keeps the reference's plain "Not Found".
    if (init.status === 404 && /^Cannot [A-Z]+ \//.test(init.detail)) init.detail = 'Not Found';
    return init;
  }
  if (exception instanceof DomainError) {
    const { status, code, type, errors, extensions } = exception.problem;
    return {
      status,
      detail: exception.message,
      code: code ?? exception.code,
      type,
      errors: errors ? [...errors] : undefined,
      extensions,
    };
  }
  if (!isRecord(exception) && !(exception instanceof Error)) return undefined;
  const error = exception as Error & Record<string, unknown>;
  const httpStatus = error['httpStatus'];
  if (typeof httpStatus === 'number' && httpStatus >= 400 && httpStatus <= 599) {
    return {
      status: httpStatus,
      detail: typeof error.message === 'string' && error.message ? error.message : statusTitle(httpStatus),
      code: typeof error['code'] === 'string' ? error['code'] : undefined,
    };
  }
  const status = error['status'] ?? error['statusCode'];
  if (error['expose'] === true && typeof status === 'number' && status >= 400 && status <= 499) {
    const type = typeof error['type'] === 'string' ? error['type'] : '';
    return { status, detail: HTTP_ERROR_DETAILS[type] ?? statusTitle(status) };
  }
  return undefined;
}

export function buildProblem(init: ProblemInit, request: { path?: string; url?: string }, requestId?: string): ProblemDetails {
  const path = request.path ?? (request.url ?? '').split('?')[0];
  const problem: ProblemDetails = {
    type: init.type ?? 'about:blank',
    title: init.title ?? statusTitle(init.status),
    status: init.status,
    detail: init.detail,
    instance: path || undefined,
    requestId,
  };
  if (init.code) problem.code = init.code;
  if (init.errors) problem.errors = init.errors;
  if (init.extensions) {
    const target = problem as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(init.extensions)) {
      if (!STANDARD_PROBLEM_MEMBERS.has(key) && value !== undefined) target[key] = value;
    }
  }
  return problem;
}

export function sendProblem(response: Response, problem: ProblemDetails): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.status(problem.status);
  response.setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  response.send(JSON.stringify(problem));
}

/** Response locals key set when a request failed with an unexpected error (read by the access log). */
export const UNHANDLED_ERROR_TYPE = 'cashcodeUnhandledErrorType';

/**
 * Global HTTP exception filter: every error response is RFC 9457 `application/problem+json` with `requestId`.
 * Unknown errors become 500 with a generic detail — no message, stack, secret or host path reaches the client.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetailsFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<Request>();
    const response = ctx.getResponse<Response>();
    const requestId = String(response.getHeader(REQUEST_ID_HEADER) ?? '') || undefined;
    let init = toProblemInit(exception);
    if (!init) {
      const errorType = exception instanceof Error ? exception.constructor.name : typeof exception;
      response.locals[UNHANDLED_ERROR_TYPE] = errorType;
      this.logger.error(exception instanceof Error ? exception : `Unhandled ${errorType}`);
      init = { status: 500, detail: 'Internal Server Error' };
    } else if (init.status >= 500) {
      this.logger.warn(`event=http.request.error status=${init.status} error_type=${JSON.stringify(
        exception instanceof Error ? exception.constructor.name : typeof exception,
      )}`);
    }
    sendProblem(response, buildProblem(init, request, requestId));
  }
}
