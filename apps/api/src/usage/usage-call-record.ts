/**
 * The ledger record of a model call and its price (openspec usage "Requirement: Usage ledger", "Requirement: Prices"):
 * pure functions used by UsageService. A call's prompt tokens split into uncached input, cache reads and cache writes
 * (Anthropic prompt caching), each priced apart.
 */
import {
  BACKGROUND_PURPOSES,
  type LlmProvider,
  type ModelCallOutcome,
  type ModelCallPurpose,
  type ModelPrice,
  type Money,
  type SpendLimit,
} from '@cashcode/contracts';
import { reportedCachedTokens, reportedCacheWriteTokens, tokenCount } from './reported-usage';
import { isoWithOffset, localDay } from './usage-calendar';
import { roundMoney, type NewUsageRecord } from './usage-ledger';
import type { ReportedUsage } from './reported-usage';

/** What a model call site says about the call it is about to make. */
export interface ModelCallRequest {
  provider: LlmProvider;
  model: string;
  purpose: ModelCallPurpose;
  chatId?: string;
  /** characters of the request: message texts, tool calls and tool schemas */
  promptChars: number;
  /** the request's `max_tokens`; the configured default when absent */
  maxOutputTokens?: number;
  /**
   * a budget of the caller's own this call counts against (a sub-agent's tokens), checked like the registered guards
   * and after them
   */
  budget?: ModelCallGuard;
}

/**
 * A check of one call before its estimate is reserved, besides the spend limits (e.g. the budget of an automation
 * run): a returned coded error refuses the call, recorded as `refused` with that code.
 */
export interface ModelCallGuard {
  check(request: ModelCallRequest, estimate: { promptTokens: number; promptCost: Money | undefined }): (Error & { code: string }) | null;
}

/** An estimate held against the limits while its call runs. */
export interface UsageReservation {
  readonly id: number;
  readonly request: ModelCallRequest;
  readonly startedAt: Date;
  readonly startedMs: number;
  readonly promptTokens: number;
  readonly tokens: number;
  readonly cost: Money | undefined;
  settled: boolean;
}

export interface ModelCallResult {
  outcome: Exclude<ModelCallOutcome, 'refused'>;
  /** absent or null: the provider reported none (the record is estimated) */
  usage?: ReportedUsage | null;
  /** characters of the answer (text and tool-call arguments), for the estimate */
  answerChars?: number;
  errorCode?: string;
}

/** Whether a limit counts the calls of this provider, model and purpose. */
export function limitCovers(limit: SpendLimit, provider: LlmProvider, model: string, purpose: ModelCallPurpose): boolean {
  switch (limit.scope) {
    case 'global':
      return true;
    case 'background':
      return BACKGROUND_PURPOSES.includes(purpose);
    case 'model':
      return limit.provider === provider && limit.model === model;
  }
}

/**
 * The cost of a call from its price, per 1e6 tokens: uncached prompt × input + cache reads × cached input (default:
 * input) + cache writes × cache write (default: input) + completion × output.
 */
export function priceCall(price: ModelPrice, promptTokens: number, cachedTokens: number, completionTokens: number, cacheWriteTokens = 0): Money {
  const cached = Math.min(cachedTokens, promptTokens);
  const written = Math.min(cacheWriteTokens, promptTokens - cached);
  const amount =
    ((promptTokens - cached - written) * price.input_per_million +
      cached * (price.cached_input_per_million ?? price.input_per_million) +
      written * (price.cache_write_per_million ?? price.input_per_million) +
      completionTokens * price.output_per_million) /
    1_000_000;
  return { amount: roundMoney(amount), currency: price.currency };
}

/** The record of a settled call: the provider's usage, else an estimate from the request and answer sizes. */
export function settledRecord(
  reservation: UsageReservation,
  result: ModelCallResult,
  price: ModelPrice | undefined,
  estimateTokens: (chars: number) => number,
): NewUsageRecord {
  const { request } = reservation;
  const reported = result.usage ?? null;
  const prompt = tokenCount(reported?.prompt_tokens);
  const completion = tokenCount(reported?.completion_tokens);
  const estimated = prompt === undefined && completion === undefined;
  const promptTokens = estimated ? reservation.promptTokens : (prompt ?? 0);
  const completionTokens = estimated ? estimateTokens(result.answerChars ?? 0) : (completion ?? 0);
  const cachedTokens = estimated ? 0 : Math.min(reportedCachedTokens(reported) ?? 0, promptTokens);
  const cacheWriteTokens = estimated ? 0 : Math.min(reportedCacheWriteTokens(reported) ?? 0, promptTokens - cachedTokens);
  const totalTokens = estimated ? promptTokens + completionTokens : (tokenCount(reported?.total_tokens) ?? promptTokens + completionTokens);
  return {
    at: isoWithOffset(reservation.startedAt),
    day: localDay(reservation.startedAt),
    provider: request.provider,
    model: request.model,
    purpose: request.purpose,
    ...(request.chatId !== undefined ? { chat_id: request.chatId } : {}),
    prompt_tokens: promptTokens,
    cached_tokens: cachedTokens,
    // additive: only when the provider wrote to its cache
    ...(cacheWriteTokens > 0 ? { cache_write_tokens: cacheWriteTokens } : {}),
    completion_tokens: completionTokens,
    total_tokens: totalTokens,
    estimated,
    duration_ms: Math.round(performance.now() - reservation.startedMs),
    outcome: result.outcome,
    ...(result.errorCode !== undefined ? { error_code: result.errorCode } : {}),
    ...(price ? { cost: priceCall(price, promptTokens, cachedTokens, completionTokens, cacheWriteTokens) } : {}),
  };
}

/** The record of a call a spend limit refused (not sent: no tokens). */
export function refusalRecord(request: ModelCallRequest, at: Date, errorCode = 'spend_limit_reached'): NewUsageRecord {
  return {
    at: isoWithOffset(at),
    day: localDay(at),
    provider: request.provider,
    model: request.model,
    purpose: request.purpose,
    ...(request.chatId !== undefined ? { chat_id: request.chatId } : {}),
    prompt_tokens: 0,
    cached_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    estimated: false,
    duration_ms: 0,
    outcome: 'refused',
    error_code: errorCode,
  };
}
