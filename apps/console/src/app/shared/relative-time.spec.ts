import { interpolate } from '../core/i18n/i18n';
import { EN_MESSAGES } from '../core/i18n/messages.en';
import { ZH_CN_MESSAGES } from '../core/i18n/messages.zh-cn';
import { relativeTime, type Translate } from './relative-time';

const en: Translate = (key, params) => interpolate(EN_MESSAGES[key], params);
const zh: Translate = (key, params) => interpolate(ZH_CN_MESSAGES[key], params);

describe('relativeTime', () => {
  const now = new Date(2026, 6, 26, 12, 0, 0).getTime();

  it('Scenario: session times read as just now, minutes, hours, days, then a date', () => {
    expect(relativeTime('2026-07-26T11:59:30', now, en, 'en')).toBe('just now');
    expect(relativeTime('2026-07-26T11:55:00', now, en, 'en')).toBe('5 min ago');
    expect(relativeTime('2026-07-26T09:00:00', now, en, 'en')).toBe('3 h ago');
    expect(relativeTime('2026-07-20T12:00:00', now, en, 'en')).toBe('6 d ago');
    expect(relativeTime('2026-05-01T12:00:00', now, en, 'en')).toBe(new Date(2026, 4, 1, 12).toLocaleDateString('en'));
  });

  it('speaks Simplified Chinese too', () => {
    expect(relativeTime('2026-07-26T11:59:30', now, zh, 'zh-CN')).toBe('刚刚');
    expect(relativeTime('2026-07-26T11:50:00', now, zh, 'zh-CN')).toBe('10 分钟前');
  });

  it('returns an empty string for an unreadable time', () => {
    expect(relativeTime('yesterday', now, en, 'en')).toBe('');
  });
});
