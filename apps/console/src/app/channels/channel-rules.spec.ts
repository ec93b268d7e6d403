import { channelMessageSource } from '@cashcode/contracts';

import { EN_MESSAGES } from '../core/i18n/messages.en';
import { interpolate, type MessageKey, type MessageParams } from '../core/i18n/i18n';
import { expiryText, messageSourceText, minutesLeft, statusKey, statusTone } from './channel-rules';

const t = (key: MessageKey, params?: MessageParams) => interpolate(EN_MESSAGES[key], params);

describe('channel rules', () => {
  it('gives each connection state its own tone and label', () => {
    expect(statusTone('connected')).toBe('ok');
    expect(statusTone('connecting')).toBe('pending');
    expect(statusTone('error')).toBe('error');
    expect(statusTone('disabled')).toBe('off');
    expect(t(statusKey('connected'))).toBe('Connected');
    expect(t(statusKey('error'))).toBe('Error');
    expect(t(statusKey('disabled'))).toBe('Off');
  });

  it('counts the whole minutes a pairing code has left (at least 1) and says when it expired', () => {
    const now = Date.parse('2026-12-04T08:00:00Z');
    expect(minutesLeft('2026-12-04T08:09:30Z', now)).toBe(9);
    expect(minutesLeft('2026-12-04T09:00:00.500Z', now)).toBe(60);
    expect(minutesLeft('2026-12-04T08:00:01Z', now)).toBe(1);
    expect(minutesLeft('2026-12-04T07:59:59Z', now)).toBe(0);
    expect(minutesLeft('not a time', now)).toBe(0);
    expect(expiryText('2026-12-04T08:05:00Z', now, t)).toBe('expires in 5 min');
    expect(expiryText('2026-12-04T07:00:00Z', now, t)).toBe('expired');
  });

  it('says "via Telegram · <name>" for a channel source', () => {
    const source = channelMessageSource({ channel: 'telegram', account: 'cash_bot', sender_id: '4242', display_name: 'Alice' });
    expect(messageSourceText(source!, t)).toBe('via Telegram · Alice');
    const member = channelMessageSource({ channel: 'telegram', account: 'cash_bot', sender_id: '77', display_name: 'Bob', owner: false });
    expect(messageSourceText(member!, t)).toBe('via Telegram group · Bob (not the owner)');
  });
});
