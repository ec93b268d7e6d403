import type { ProblemFieldError } from '@cashcode/contracts';

/**
 * A failed REST call, parsed from an RFC 9457 problem+json body (or whatever the server sent).
 * `status` 0 means the server could not be reached.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseFieldErrors(raw: unknown): ProblemFieldError[] {
  if (!Array.isArray(raw)) return [];
  const out: ProblemFieldError[] = [];
  for (const entry of raw) {
    if (!isRecord(entry)) continue;
    const field = entry['field'];
    const message = entry['message'];
    if (typeof field === 'string' && typeof message === 'string') out.push({ field, message });
  }
  return out;
}

/**
 * Builds an ApiError from a status, a status text and the response body (already parsed JSON, or text).
 * Detail: problem `detail`, else the field errors' messages, else the problem `title`, else the body text, else the
 * status text, else `fallback(status)`.
 */
export function toApiError(
  status: number,
  statusText: string,
  body: unknown,
  fallback: (status: number) => string,
): ApiError {
  let parsed: unknown = body;
  if (typeof body === 'string' && body.trim().startsWith('{')) {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = body;
    }
  }
  if (isRecord(parsed)) {
    const fieldErrors = parseFieldErrors(parsed['errors']);
    const detail = parsed['detail'];
    if (typeof detail === 'string' && detail.trim() !== '') return new ApiError(status, detail, fieldErrors);
    const title = parsed['title'];
    if (fieldErrors.length > 0) return new ApiError(status, fieldErrors.map((e) => e.message).join('; '), fieldErrors);
    if (typeof title === 'string' && title.trim() !== '') return new ApiError(status, title, fieldErrors);
  }
  if (typeof parsed === 'string' && parsed.trim() !== '') return new ApiError(status, parsed.trim().slice(0, 500));
  if (statusText.trim() !== '' && statusText !== 'OK' && statusText !== 'Unknown Error') {
    return new ApiError(status, statusText);
  }
  return new ApiError(status, fallback(status));
}

/** Message for any thrown value (ApiError or not). */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
