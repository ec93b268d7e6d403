/**
 * Provider error classification (openspec llm-settings "Requirement: Provider error classification" and "Requirement:
 * Connection test"; no key or secret ever reaches a message).
 *
 * Maps whatever an `openai` or `@anthropic-ai/sdk` call threw (SDK errors, fetch/undici errors, DOMException aborts,
 * an error event inside a stream: OpenAI's, OpenRouter's, Anthropic's `overloaded_error`) to a
 * ClassifiedProviderError whose message is a fixed English sentence: the provider's own text, the API key and the
 * base URL are never part of it.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  PermissionDeniedError,
  RateLimitError,
} from 'openai';
import {
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicConnectionTimeoutError,
  APIError as AnthropicApiError,
  APIUserAbortError as AnthropicUserAbortError,
} from '@anthropic-ai/sdk';
import type { ProblemReason } from '@cashcode/contracts';
import { ModelCallError, type ClassifiedProviderError, type ProviderErrorKind } from './llm-provider';

/** Fixed user-facing messages, one per outcome. */
export const PROVIDER_ERROR_MESSAGES = {
  timeout: 'Connection timed out: check the service address and network.',
  auth: 'Authentication failed: check the API key.',
  connection: 'Cannot connect to the model service: check the service address.',
  rate_limit: 'The model service is busy: try again later.',
  quota: 'The model provider reports that the account quota is exhausted: check the plan and billing.',
  context_length: "The conversation is too long for the model's context window.",
  transient: 'The model service returned a temporary error: try again later.',
  fatal: 'The model request failed: check the provider configuration and the selected model.',
  cancelled: 'The model request was cancelled.',
  /** Anthropic's `stop_reason: "refusal"`: the answer was stopped and must not stay in the conversation */
  refusal: 'The model declined to continue this answer: rephrase the request.',
  /** generic probe failure (openspec llm-settings) */
  probe_generic: 'Connection failed: check the provider configuration.',
} as const;

const RETRYABLE: Readonly<Record<ProviderErrorKind, boolean>> = {
  auth: false,
  rate_limit: true,
  quota: false,
  timeout: true,
  context_length: false,
  transient: true,
  fatal: false,
  cancelled: false,
};

// llama.cpp: "the request exceeds the available context size" (type `exceed_context_size_error`)
const CONTEXT_LENGTH_PATTERN =
  /context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|too many tokens|available context size|exceed_context_size/i;
const QUOTA_PATTERN = /insufficient_quota|exceeded your current quota|quota exceeded|billing/i;

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  code?: unknown;
}

function asErrorLike(value: unknown): ErrorLike | null {
  return typeof value === 'object' && value !== null ? (value as ErrorLike) : null;
}

/** Walks err, err.cause, err.cause.cause ... (bounded, cycle safe). */
function causeChain(err: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (chain.length < 8) {
    const item = asErrorLike(current);
    if (!item || seen.has(item)) break;
    seen.add(item);
    chain.push(item);
    current = item.cause;
  }
  return chain;
}

function nameOf(item: ErrorLike): string {
  return typeof item.name === 'string' ? item.name : '';
}

function isTimeoutLike(item: ErrorLike): boolean {
  if (item instanceof APIConnectionTimeoutError) return true;
  const name = nameOf(item);
  if (name === 'TimeoutError' || /timeout/i.test(name)) return true;
  const code = typeof item.code === 'string' ? item.code : '';
  return code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT'
    || code === 'UND_ERR_BODY_TIMEOUT';
}

/** An SDK API error of either SDK: its status, headers and body. */
interface ApiErrorLike {
  status?: number | undefined;
  headers?: unknown;
  error?: unknown;
  message: string;
  code?: unknown;
  type?: unknown;
}

/**
 * Text that may identify the error kind: SDK code/type fields plus the body message, one level into a nested `error`
 * object (Anthropic's `{ type: 'error', error: { type, message } }`); never shown to users.
 */
function diagnosticText(err: ApiErrorLike): string {
  const parts: string[] = [];
  if (typeof err.code === 'string') parts.push(err.code);
  if (typeof err.type === 'string') parts.push(err.type);
  const collect = (body: unknown, depth: number): void => {
    if (typeof body === 'string') {
      parts.push(body);
    } else if (body && typeof body === 'object') {
      const record = body as Record<string, unknown>;
      for (const key of ['code', 'type', 'message', 'error']) {
        const value = record[key];
        if (typeof value === 'string') parts.push(value);
        else if (key === 'error' && depth === 0) collect(value, 1);
      }
    }
  };
  collect(err.error, 0);
  if (typeof err.message === 'string') parts.push(err.message);
  return parts.join(' \n ');
}

/** Parses `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfterMs(headers: unknown, now: number = Date.now()): number | null {
  const get = (name: string): string | null => {
    if (!headers || typeof headers !== 'object') return null;
    const maybeGet = (headers as { get?: unknown }).get;
    if (typeof maybeGet === 'function') {
      const value: unknown = (maybeGet as (key: string) => unknown).call(headers, name);
      return typeof value === 'string' ? value : null;
    }
    const record = headers as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (key.toLowerCase() === name && typeof value === 'string') return value;
    }
    return null;
  };
  const ms = get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const parsed = Number(ms.trim());
    if (Number.isFinite(parsed) && parsed >= 0) return Math.round(parsed);
  }
  const after = get('retry-after');
  if (after !== null && after.trim() !== '') {
    const trimmed = after.trim();
    const seconds = Number(trimmed);
    if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : null;
    const date = Date.parse(trimmed);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return null;
}

function classified(kind: ProviderErrorKind, retryAfterMs: number | null = null): ClassifiedProviderError {
  return { kind, retryable: RETRYABLE[kind], retryAfterMs, message: PROVIDER_ERROR_MESSAGES[kind] };
}

function classifyApiStatus(err: ApiErrorLike, status: number): ClassifiedProviderError {
  const retryAfterMs = parseRetryAfterMs(err.headers);
  const text = diagnosticText(err);
  if (err instanceof AuthenticationError || err instanceof PermissionDeniedError || status === 401 || status === 403) {
    return classified('auth');
  }
  if (err instanceof RateLimitError || status === 429) {
    return QUOTA_PATTERN.test(text) ? classified('quota') : classified('rate_limit', retryAfterMs);
  }
  if (status === 408) return classified('timeout', retryAfterMs);
  if (status === 413 || ((status === 400 || status === 422) && CONTEXT_LENGTH_PATTERN.test(text))) {
    return classified('context_length');
  }
  if (status === 409 || status >= 500) return classified('transient', retryAfterMs);
  return classified('fatal');
}

/** An error event inside a stream (no HTTP status): an HTTP status as its code (OpenRouter), else the body's words. */
function classifyStreamError(err: ApiErrorLike): ClassifiedProviderError {
  const bodyCode = (err.error as { code?: unknown } | null | undefined)?.code;
  if (typeof bodyCode === 'number' && bodyCode >= 400 && bodyCode < 600) return classifyApiStatus(err, bodyCode);
  const text = diagnosticText(err);
  if (QUOTA_PATTERN.test(text)) return classified('quota');
  if (CONTEXT_LENGTH_PATTERN.test(text)) return classified('context_length');
  if (/rate[_ ]limit/i.test(text)) return classified('rate_limit');
  if (/overloaded|server[_ ]error|api_error|unavailable/i.test(text)) return classified('transient');
  return classified('fatal');
}

/** The errors of the `@anthropic-ai/sdk` client, classified like the `openai` client's; null for anything else. */
function classifyAnthropicError(err: unknown): ClassifiedProviderError | null {
  if (err instanceof AnthropicUserAbortError) return classified('cancelled');
  if (err instanceof AnthropicConnectionTimeoutError) return classified('timeout');
  if (!(err instanceof AnthropicApiError)) return null;
  if (err instanceof AnthropicConnectionError) {
    return causeChain(err).slice(1).some(isTimeoutLike) ? classified('timeout') : classified('transient');
  }
  return typeof err.status === 'number' ? classifyApiStatus(err, err.status) : classifyStreamError(err);
}

/**
 * Classifies anything thrown by a provider call. `rate_limit`, `timeout` and `transient` are retryable;
 * `retryAfterMs` is set when the provider sent Retry-After / retry-after-ms.
 */
export function classifyProviderError(err: unknown): ClassifiedProviderError {
  if (err instanceof APIUserAbortError) return classified('cancelled');
  // a gateway's own verdict on an answer (e.g. a refusal): already classified
  if (err instanceof ModelCallError) return err.classified;
  const anthropic = classifyAnthropicError(err);
  if (anthropic) return anthropic;
  const chain = causeChain(err);
  const head = chain[0];

  // Timeouts first: SDK timeout, DOMException TimeoutError, an abort whose reason is a timeout, undici timeouts.
  if (err instanceof APIConnectionTimeoutError) return classified('timeout');
  if (head && nameOf(head) === 'AbortError') {
    return chain.slice(1).some(isTimeoutLike) ? classified('timeout') : classified('cancelled');
  }
  if (head && isTimeoutLike(head)) return classified('timeout');

  if (err instanceof APIError) {
    if (err instanceof APIConnectionError) {
      return chain.slice(1).some(isTimeoutLike) ? classified('timeout') : classified('transient');
    }
    if (typeof err.status === 'number') return classifyApiStatus(err, err.status);
    return classifyStreamError(err);
  }

  // fetch / undici / socket failures outside the SDK ("fetch failed", ECONNREFUSED, ECONNRESET ...).
  if (chain.some(isTimeoutLike)) return classified('timeout');
  if (chain.some(isConnectionLike)) return classified('transient');
  return classified('fatal');
}

function isConnectionLike(item: ErrorLike): boolean {
  const code = typeof item.code === 'string' ? item.code : '';
  if (/^(?:ECONNREFUSED|ECONNRESET|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET)$/.test(code)) {
    return true;
  }
  const name = nameOf(item);
  if (/connection/i.test(name)) return true;
  return name === 'TypeError' && typeof item.message === 'string' && /fetch failed/i.test(item.message);
}

/**
 * An "expected provider failure" (openspec llm-settings): timeouts and connection failures anywhere in the cause chain.
 * Callers log these as warnings without a stack trace.
 */
export function isExpectedProviderFailure(err: unknown): boolean {
  if (err instanceof APIConnectionError || err instanceof AnthropicConnectionError) return true;
  return causeChain(err).some((item) => isTimeoutLike(item) || isConnectionLike(item));
}

/**
 * The connection-test taxonomy of openspec llm-settings "Requirement: Connection test" (used by `/test` 400 detail and
 * `/models` provider `error`), first match wins: timeout → authentication → cannot connect → busy → generic. Never
 * contains provider text.
 */
export function probeErrorMessage(err: unknown): string {
  return PROVIDER_ERROR_MESSAGES[probeErrorReason(err)];
}

/** The outcome of a failed probe, also the connection test problem's `reason` (clients translate it). */
export function probeErrorReason(err: unknown): ProblemReason<'connection_failed'> {
  const kind = classifyProviderError(err).kind;
  if (kind === 'timeout') return 'timeout';
  if (kind === 'auth') return 'auth';
  if (
    err instanceof APIConnectionError ||
    (err instanceof AnthropicConnectionError && !(err instanceof AnthropicConnectionTimeoutError)) ||
    (!(err instanceof APIError) && !(err instanceof AnthropicApiError) && causeChain(err).some(isConnectionLike))
  ) {
    return 'connection';
  }
  if (kind === 'rate_limit' || kind === 'quota') return 'rate_limit';
  return 'probe_generic';
}
