/**
 * The words of usage: a limit's name, its use and reset time, the chat banner and the refusal message, in the
 * console's language (number, money and date formats of its locale).
 */
import type { ModelCallPurpose, SpendLimitStatus } from '@cashcode/contracts';

import type { MessageKey, MessageParams } from '../core/i18n/i18n';
import { formatDateTime, formatLimitAmount, formatShare } from './usage-format';

/** What the helpers need of the I18n service. */
export interface UsageTranslator {
  t(key: MessageKey, params?: MessageParams): string;
  locale(): string;
}

export function purposeLabel(i18n: UsageTranslator, purpose: ModelCallPurpose | string): string {
  const key = `usage.purpose.${purpose}` as MessageKey;
  const text = i18n.t(key);
  return text === key ? purpose : text;
}

/** `daily limit for all models`, `monthly limit for model gpt-4o` */
export function limitName(i18n: UsageTranslator, limit: Pick<SpendLimitStatus, 'scope' | 'window' | 'model'>): string {
  const scope =
    limit.scope === 'model'
      ? i18n.t('usage.scope.model', { model: limit.model ?? '' })
      : i18n.t(limit.scope === 'background' ? 'usage.scope.background' : 'usage.scope.global');
  return i18n.t('usage.limitName', { window: i18n.t(limit.window === 'month' ? 'usage.window.month' : 'usage.window.day'), scope });
}

/** The params of the banner and refusal messages: `limit`, `used`, `amount`, `share` and `resets`. */
export function limitParams(i18n: UsageTranslator, limit: SpendLimitStatus): MessageParams {
  const locale = i18n.locale();
  return {
    limit: limitName(i18n, limit),
    used: formatLimitAmount(limit, limit.used, locale),
    amount: formatLimitAmount(limit, limit.amount, locale),
    share: formatShare(limit.share, locale),
    resets: formatDateTime(limit.resets_at, locale),
  };
}

/** The chat banner of a limit in `warning` or `reached`. */
export function limitBannerText(i18n: UsageTranslator, limit: SpendLimitStatus): string {
  return i18n.t(limit.state === 'reached' ? 'usage.banner.reached' : 'usage.banner.warning', limitParams(i18n, limit));
}

/** The message of a turn refused by a limit (`error` with code `spend_limit_reached`). */
export function spendLimitRefusal(i18n: UsageTranslator, limit: SpendLimitStatus): string {
  return i18n.t('problem.spend_limit_reached', limitParams(i18n, limit));
}
