/**
 * Pure rules of Settings → Channels and of channel chats (openspec console "Requirement: Settings → Channels",
 * "Requirement: Channel chats in the chat list"): status tones, pairing expiry, the "via Telegram · <name>" line of a
 * user message.
 */
import type { ChannelKind, ChannelMessageSource, ChannelStatus, TelegramChatType } from '@cashcode/contracts';

import type { MessageKey } from '../core/i18n/i18n';
import type { Translate } from '../shared/relative-time';

/** How often the open Settings → Channels page asks for the status and the pairings. */
export const CHANNEL_POLL_MS = 3_000;

/** Brand names are not translated. */
export const CHANNEL_NAMES: Readonly<Record<ChannelKind, string>> = { telegram: 'Telegram' };

export type StatusTone = 'ok' | 'pending' | 'error' | 'off';

export function statusTone(status: ChannelStatus): StatusTone {
  switch (status) {
    case 'connected':
      return 'ok';
    case 'connecting':
      return 'pending';
    case 'error':
      return 'error';
    default:
      return 'off';
  }
}

export function statusKey(status: ChannelStatus): MessageKey {
  switch (status) {
    case 'connected':
      return 'channels.status.connected';
    case 'connecting':
      return 'channels.status.connecting';
    case 'error':
      return 'channels.status.error';
    default:
      return 'channels.status.disabled';
  }
}

export function chatTypeKey(type: TelegramChatType): MessageKey {
  if (type === 'group') return 'channels.chatType.group';
  if (type === 'supergroup') return 'channels.chatType.supergroup';
  return 'channels.chatType.private';
}

/** Whole minutes until a pairing code expires (at least 1 while it is valid); 0 once it expired or for an unreadable time. */
export function minutesLeft(expiresAt: string, now: number): number {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at) || at <= now) return 0;
  return Math.max(1, Math.floor((at - now) / 60_000));
}

/** "expires in 9 min" or "expired". */
export function expiryText(expiresAt: string, now: number, t: Translate): string {
  const minutes = minutesLeft(expiresAt, now);
  return minutes === 0 ? t('channels.expired') : t('channels.expiresIn', { n: minutes });
}

/** "via Telegram · Alice" for a user message that arrived through a channel. */
export function messageSourceText(source: ChannelMessageSource, t: Translate): string {
  const params = { channel: CHANNEL_NAMES[source.channel], name: source.display_name };
  // a group member who is not the owner: untrusted input, said so
  return source.owner === false ? t('channels.viaMember', params) : t('channels.via', params);
}
