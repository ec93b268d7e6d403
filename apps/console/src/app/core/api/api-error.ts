import { isRecord, type ProblemDetails, type ProblemFieldError } from '@cashcode/contracts';

/**
 * A failed REST call, parsed from an RFC 9457 problem+json body (ProblemDetails) or whatever the server sent.
 * `status` 0 means the server could not be reached. `detail` is the message to show: the localized message of a
 * known problem `code`, else the server's own `detail`, kept in `serverDetail`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
    readonly code?: string,
    readonly serverDetail: string = detail,
    /** the parsed problem body, for a caller that reads additive members (e.g. Skill import's `skills`) */
    readonly problem: Readonly<Record<string, unknown>> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

/** The localized message of a problem `code` (given the parsed body), or undefined for a code the console does not know. */
export type ProblemLocalizer = (code: string, problem: Readonly<Record<string, unknown>>) => string | undefined;

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
 * Detail: the localized message of a known problem `code`, else the problem `detail`, else the field errors'
 * messages, else the problem `title`, else the body text, else the status text, else `fallback(status)`.
 */
export function toApiError(
  status: number,
  statusText: string,
  body: unknown,
  fallback: (status: number) => string,
  localize: ProblemLocalizer = () => undefined,
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
    const problem = parsed as Partial<Record<keyof ProblemDetails, unknown>>;
    const fieldErrors = parseFieldErrors(problem.errors);
    const detail = problem.detail;
    const code = typeof problem.code === 'string' && problem.code !== '' ? problem.code : undefined;
    const localized = code === undefined ? undefined : localize(code, parsed);
    const serverDetail = typeof detail === 'string' && detail.trim() !== '' ? detail : undefined;
    if (localized !== undefined) {
      return new ApiError(status, localized, fieldErrors, code, serverDetail ?? localized, parsed);
    }
    if (serverDetail !== undefined) return new ApiError(status, serverDetail, fieldErrors, code, serverDetail, parsed);
    const title = problem.title;
    if (fieldErrors.length > 0) {
      return new ApiError(status, fieldErrors.map((e) => e.message).join('; '), fieldErrors, code);
    }
    if (typeof title === 'string' && title.trim() !== '') return new ApiError(status, title, fieldErrors, code);
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
