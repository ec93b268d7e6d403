/**
 * Usage, prices and spend limits (openspec usage): every model call is recorded in the usage ledger, priced with the
 * user's price table, and checked against the spend limits before it is made.
 *
 * Days and months are the server's local calendar (`time_zone` in the answers says which): a daily limit resets at
 * local midnight, a monthly one at local midnight of the 1st. Dates in queries are `YYYY-MM-DD` in that zone.
 */
import type { LlmProvider } from './llm-provider';

/** Why a model call was made. Background purposes share the background limit. */
export type ModelCallPurpose =
  /** one iteration of a chat turn (console chat, or /v1 with a chat id) */
  | 'chat'
  /** one iteration of a stateless /v1/chat/completions request (no chat id) */
  | 'api'
  | 'consolidation'
  | 'dream'
  | 'title'
  | 'evolution'
  | 'connection_test'
  /** additive: one model call of a sub-agent (openspec subagents), with its parent chat's id */
  | 'subagent';
export const MODEL_CALL_PURPOSES: readonly ModelCallPurpose[] = [
  'chat',
  'api',
  'consolidation',
  'dream',
  'title',
  'evolution',
  'connection_test',
  'subagent',
];
/** The purposes counted by a `background` limit. */
export const BACKGROUND_PURPOSES: readonly ModelCallPurpose[] = ['consolidation', 'dream', 'title', 'evolution'];

/**
 * - `ok`: the provider answered
 * - `error`: the provider failed or timed out (tokens are what it reported, else the estimate of the request)
 * - `cancelled`: stopped by the user or a shutdown
 * - `refused`: not sent, a spend limit would have been crossed (no tokens)
 */
export type ModelCallOutcome = 'ok' | 'error' | 'cancelled' | 'refused';

/** An amount of money in one currency (ISO 4217 code as entered with the price, e.g. `USD`). */
export interface Money {
  amount: number;
  currency: string;
}

/** One model call in the ledger (`GET /api/usage/records`). */
export interface UsageRecord {
  id: number;
  /** ISO 8601 with the server's offset, when the call started */
  at: string;
  provider: LlmProvider;
  model: string;
  purpose: ModelCallPurpose;
  /** the chat it was made for, when there is one */
  chat_id?: string;
  prompt_tokens: number;
  /** prompt tokens served from the provider's cache (0 when it does not say) */
  cached_tokens: number;
  /** additive: prompt tokens written to the provider's cache (Anthropic prompt caching; 0 when it does not say) */
  cache_write_tokens?: number;
  completion_tokens: number;
  total_tokens: number;
  /** true when the provider reported no usage and the tokens are estimated from the request and answer sizes */
  estimated: boolean;
  duration_ms: number;
  outcome: ModelCallOutcome;
  /** machine-readable error class for `error` and `refused` (e.g. `rate_limit`, `spend_limit_reached`) */
  error_code?: string;
  /** priced with the price table when the call was recorded; absent: the model had no price */
  cost?: Money;
}

export interface UsageRecordsPage {
  records: UsageRecord[];
  /** pass as `before` to get the next (older) page; absent on the last page */
  next_before?: number;
}

/** Token and cost totals of a set of calls. */
export interface UsageTotals {
  calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  /** additive: prompt tokens written to the provider's cache */
  cache_write_tokens?: number;
  completion_tokens: number;
  total_tokens: number;
  /** calls whose tokens are estimates */
  estimated_calls: number;
  /** calls of models without a price (their tokens count, their cost is unknown) */
  unpriced_calls: number;
  /** cost of the priced calls, one entry per currency (empty when none was priced) */
  cost: Money[];
}

/** One (day, provider, model, purpose) group of `GET /api/usage/summary`. */
export interface UsageSummaryRow extends UsageTotals {
  /** `YYYY-MM-DD`, server-local */
  day: string;
  provider: LlmProvider;
  model: string;
  purpose: ModelCallPurpose;
}

/** `GET /api/usage/summary?from=YYYY-MM-DD&to=YYYY-MM-DD` (default: the last 30 days up to today). */
export interface UsageSummary {
  from: string;
  to: string;
  /** IANA zone of the server's calendar, e.g. `Europe/Berlin` */
  time_zone: string;
  rows: UsageSummaryRow[];
  totals: UsageTotals;
}

/** `GET /api/usage/chats/{chat_id}`: what one chat has cost so far. */
export interface ChatUsage {
  chat_id: string;
  totals: UsageTotals;
}

/** A model's price per million tokens. `cached_input_per_million` and `cache_write_per_million` default to `input_per_million`. */
export interface ModelPrice {
  provider: LlmProvider;
  model: string;
  input_per_million: number;
  cached_input_per_million?: number;
  /** additive: price of prompt tokens written to the provider's cache (Anthropic); defaults to `input_per_million` */
  cache_write_per_million?: number;
  output_per_million: number;
  /** ISO 4217 code, three upper-case letters */
  currency: string;
}

/** `GET` / `PUT /api/usage/prices` (stored with the settings; nothing is shipped). */
export interface PriceTable {
  prices: ModelPrice[];
}

export type SpendLimitWindow = 'day' | 'month';
export type SpendLimitUnit = 'tokens' | 'money';
/**
 * - `global`: every model call
 * - `model`: the calls to one provider's model
 * - `background`: Dream, consolidation, skill evolution and titles
 */
export type SpendLimitScope = 'global' | 'model' | 'background';

export interface SpendLimit {
  /** stable id (1–64 of `A-Za-z0-9_-`), chosen by the client */
  id: string;
  scope: SpendLimitScope;
  /** for `model` */
  provider?: LlmProvider;
  /** for `model` */
  model?: string;
  window: SpendLimitWindow;
  unit: SpendLimitUnit;
  /** tokens, or money in `currency` */
  amount: number;
  /** for `money`: only calls priced in this currency count */
  currency?: string;
}

/** `GET` / `PUT /api/usage/limits`. */
export interface SpendLimitSettings {
  limits: SpendLimit[];
  /** share of a limit at which the console warns (0 < warn_at < 1; default 0.8) */
  warn_at: number;
}

/** A limit with its current use (`GET /api/usage/limits/status`, the `limit` of a refusal or a warning). */
export interface SpendLimitStatus extends SpendLimit {
  /** settled use in the current window */
  used: number;
  /** estimates of calls in flight, not yet settled */
  reserved: number;
  /** used / amount */
  share: number;
  state: 'ok' | 'warning' | 'reached';
  /** ISO 8601 with offset: when the window restarts */
  resets_at: string;
}

export interface SpendLimitsStatus {
  time_zone: string;
  warn_at: number;
  limits: SpendLimitStatus[];
}

/**
 * WS (additive): a model call of this chat's turn took a limit to or past its warning share. Sent once per limit and
 * window to the connections of the chat.
 */
export interface UsageWarningEvent {
  event: 'usage_warning';
  chat_id: string;
  limit: SpendLimitStatus;
}
