/**
 * Relative time of a session (openspec console): "just now" under a minute, minutes, hours, days under 30 days,
 * otherwise the locale's date. Server times are local ISO strings, with or without an offset.
 */
import type { MessageKey, MessageParams } from '../core/i18n/i18n';

export type Translate = (key: MessageKey, params?: MessageParams) => string;

export function relativeTime(iso: string, now: number, translate: Translate, locale: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const seconds = Math.max(0, Math.floor((now - time) / 1000));
  if (seconds < 60) return translate('time.justNow');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return translate('time.minutes', { n: minutes });
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return translate('time.hours', { n: hours });
  const days = Math.floor(hours / 24);
  if (days < 30) return translate('time.days', { n: days });
  return new Date(time).toLocaleDateString(locale);
}
