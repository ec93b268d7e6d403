import { HttpStatus } from '@nestjs/common';
import type { SpendLimitStatus } from '@cashcode/contracts';
import { DomainError, type DomainProblem, validationProblem } from '../common/domain-error';
import type { ProblemFieldError } from '../common/problem-details';

export type UsageErrorCode =
  /** a query parameter of `/api/usage/*` is invalid (bad date, `from` after `to`, range too long, bad purpose, …) */
  | 'invalid_usage_query'
  /** a submitted price table or limit set is invalid (field-level errors attached) */
  | 'invalid_usage_settings'
  /** writing the prices or limits file failed; nothing changed */
  | 'settings_save_failed';

/** Coded domain error of the usage REST API, rendered by the global problem-details filter. */
export class UsageError extends DomainError<UsageErrorCode> {
  constructor(
    code: UsageErrorCode,
    message: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
  ) {
    super(code, message, usageProblem(code, fieldErrors));
  }
}

function usageProblem(code: UsageErrorCode, fieldErrors: readonly ProblemFieldError[]): DomainProblem {
  switch (code) {
    case 'invalid_usage_query':
    case 'invalid_usage_settings':
      return validationProblem(fieldErrors, code);
    case 'settings_save_failed':
      return { status: HttpStatus.SERVICE_UNAVAILABLE };
  }
}

/**
 * A model call was not made: it would have crossed a spend limit (openspec usage "Requirement: Spend limits"). The WS
 * `error` of a chat turn carries `limit`; over REST it is a 429 problem with the limit as an extension; `/v1` answers
 * an OpenAI-style 429 with code `spend_limit_reached`.
 */
export class SpendLimitError extends DomainError<'spend_limit_reached'> {
  constructor(readonly limit: SpendLimitStatus) {
    super('spend_limit_reached', spendLimitDetail(limit), {
      status: HttpStatus.TOO_MANY_REQUESTS,
      extensions: { limit },
    });
  }
}

/** "The daily token limit "day-tokens" (1,000 tokens) would be crossed: 950 spent, resets at …". */
export function spendLimitDetail(limit: SpendLimitStatus): string {
  const scope =
    limit.scope === 'global' ? '' : limit.scope === 'background' ? ' background' : ` ${limit.provider}/${limit.model}`;
  const window = limit.window === 'day' ? 'daily' : 'monthly';
  const amount = (value: number) =>
    limit.unit === 'tokens' ? `${Math.round(value).toLocaleString('en-US')} tokens` : `${formatMoney(value)} ${limit.currency ?? ''}`.trim();
  return (
    `The${scope} ${window} ${limit.unit === 'tokens' ? 'token' : 'spend'} limit "${limit.id}" (${amount(limit.amount)}) ` +
    `would be crossed by this model call: ${amount(limit.used)} spent` +
    (limit.reserved > 0 ? ` and ${amount(limit.reserved)} reserved by calls in flight` : '') +
    `; it resets at ${limit.resets_at}.`
  );
}

function formatMoney(value: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
}
