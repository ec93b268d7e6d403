/**
 * The OpenAI-format errors of `/v1` turns and model ids (openspec openai-compat "Requirement: Request validation and
 * errors"): the chat's WS error codes and the provider error taxonomy as OpenAI error types, codes and statuses.
 */
import { HttpStatus } from '@nestjs/common';
import { OpenAiError } from '../common/openai-error';

export function notFound(model: string): OpenAiError {
  return new OpenAiError(
    HttpStatus.NOT_FOUND,
    'invalid_request_error',
    'model_not_found',
    `The model '${model.slice(0, 200)}' does not exist. Use 'cashcode' or one of the ids GET /v1/models lists.`,
    'model',
  );
}

export function notConfigured(message: string): OpenAiError {
  return new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'llm_not_configured', message);
}

/** The OpenAI error of a failed model call (the provider error taxonomy): 502, or 504 for a timeout. */
export function upstreamError(code: string, message: string): OpenAiError {
  const timeout = code === 'timeout';
  return new OpenAiError(
    timeout ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY,
    'upstream_error',
    `upstream_${code}`,
    `The model provider failed: ${message}`,
  );
}

/** 429 `spend_limit_reached`: a spend limit refused the turn's model call; retry once its window restarts. */
export function spendLimitError(detail: string, resetsAt?: string): OpenAiError {
  const waitSec = resetsAt ? Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000)) : undefined;
  return new OpenAiError(
    HttpStatus.TOO_MANY_REQUESTS,
    'rate_limit_error',
    'spend_limit_reached',
    detail,
    null,
    waitSec !== undefined && Number.isFinite(waitSec) ? { 'Retry-After': String(waitSec) } : {},
  );
}

/** The OpenAI error for a chat turn's `error` event (the WS codes). */
export function chatTurnError(code: string, detail: string, resetsAt?: string): OpenAiError {
  switch (code) {
    case 'spend_limit_reached':
      return spendLimitError(detail, resetsAt);
    case 'llm_not_configured':
    case 'llm_unavailable':
      return notConfigured(detail);
    case 'queue_full':
      return new OpenAiError(HttpStatus.TOO_MANY_REQUESTS, 'rate_limit_error', 'chat_busy', detail, null, { 'Retry-After': '1' });
    case 'shutting_down':
      return new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'shutting_down', detail);
    case 'auth':
    case 'rate_limit':
    case 'quota':
    case 'timeout':
    case 'context_length':
    case 'transient':
    case 'fatal':
      return upstreamError(code, detail);
    case 'internal_error':
      return new OpenAiError(HttpStatus.INTERNAL_SERVER_ERROR, 'server_error', 'internal_error', detail);
    default:
      return new OpenAiError(HttpStatus.BAD_REQUEST, 'invalid_request_error', code, detail);
  }
}

