/**
 * Pure rules of Settings → Channels and of channel chats (openspec console "Requirement: Settings → Channels",
 * "Requirement: Channel chats in the chat list"): status tones, pairing expiry, the "via Telegram · <name>" line of a
 * user message and the normalised `source` of a loaded history row.
 */
import type { ChannelKind, ChannelMessageSource, ChannelStatus, SessionChannel, TelegramChatType } from '@cashcode/contracts';

import type { MessageKey } from '../core/i18n/i18n';
import type { Translate } from '../shared/relative-time';

/** How often the open Settings → Channels page asks for the status and the pairings. */
export const CHANNEL_POLL_MS = 3_000;

/** Brand names are not translated. */
export const CHANNEL_NAMES: Readonly<Record<ChannelKind, string>> = { telegram: 'Telegram' };

const KINDS: readonly ChannelKind[] = ['telegram'];
const CHAT_TYPES: readonly TelegramChatType[] = ['private', 'group', 'supergroup'];

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

/** Whole minutes until a pairing code expires (rounded up); 0 once it expired or for an unreadable time. */
export function minutesLeft(expiresAt: string, now: number): number {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at) || at <= now) return 0;
  return Math.ceil((at - now) / 60_000);
}

/** "expires in 9 min" or "expired". */
export function expiryText(expiresAt: string, now: number, t: Translate): string {
  const minutes = minutesLeft(expiresAt, now);
  return minutes === 0 ? t('channels.expired') : t('channels.expiresIn', { n: minutes });
}

function isKind(value: unknown): value is ChannelKind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** The `source` of a loaded user row, when it is a well-formed channel source (anything else: none). */
export function normalizeMessageSource(raw: unknown): ChannelMessageSource | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const record = raw as Record<string, unknown>;
  const channel = record['channel'];
  const senderId = record['sender_id'];
  const name = text(record['display_name']);
  if (!isKind(channel) || name === null) return undefined;
  return {
    channel,
    account: typeof record['account'] === 'string' ? record['account'] : '',
    sender_id: typeof senderId === 'string' || typeof senderId === 'number' ? String(senderId) : '',
    display_name: name,
  };
}

/** The `channel` of a session list entry, when it is well formed (anything else: a plain chat). */
export function normalizeSessionChannel(raw: unknown): SessionChannel | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const record = raw as Record<string, unknown>;
  const kind = record['kind'];
  const name = text(record['display_name']);
  if (!isKind(kind) || name === null) return undefined;
  const chatType = record['chat_type'];
  return {
    kind,
    display_name: name,
    sender_id: String(record['sender_id'] ?? ''),
    chat_type: CHAT_TYPES.includes(chatType as TelegramChatType) ? (chatType as TelegramChatType) : 'private',
  };
}

/** "via Telegram · Alice" for a user message that arrived through a channel. */
export function messageSourceText(source: ChannelMessageSource, t: Translate): string {
  return t('channels.via', { channel: CHANNEL_NAMES[source.channel], name: source.display_name });
}
