/**
 * Channels (openspec channels): messaging apps that reach the agent, each conversation a normal CashCode chat.
 * Telegram is the first channel. Nobody talks to the agent through a channel until the owner approves their pairing
 * code; the bot token is write-only (the settings carry only a masked hint).
 */

/** The kinds of channel the server knows. */
export type ChannelKind = 'telegram';

/** The connection state of a channel: `error` carries the reason in `error`. */
export type ChannelStatus = 'disabled' | 'connecting' | 'connected' | 'error';

/** Where a Telegram message came from. */
export type TelegramChatType = 'private' | 'group' | 'supergroup';

/** `GET /api/channels` — one entry per channel kind, for the Settings → Channels list. */
export interface ChannelSummary {
  kind: ChannelKind;
  enabled: boolean;
  status: ChannelStatus;
}
export interface ChannelListResponse {
  channels: ChannelSummary[];
}

/** `GET`/`PUT /api/channels/telegram` — the Telegram settings, the token masked. */
export interface TelegramChannelSettings {
  enabled: boolean;
  /** a bot token is stored */
  token_set: boolean;
  /** the token's last characters for recognition, e.g. `…AbCd`; null when none is stored */
  token_hint: string | null;
  /** the Bot API origin the token is bound to */
  api_root: string;
  /** group chats may reach the agent (only messages that mention the bot) */
  groups_enabled: boolean;
  status: ChannelStatus;
  /** the reason of `status: 'error'` */
  error: string | null;
  /** the bot's `@username` (without `@`) once the token was checked */
  bot_username: string | null;
}

/** `PUT /api/channels/telegram` — every field optional; `token: ""` clears the stored token. */
export interface UpdateTelegramChannelRequest {
  enabled?: boolean;
  /** write-only: never returned */
  token?: string;
  groups_enabled?: boolean;
}

/** A sender who asked to talk to the agent and waits for the owner's approval of their code. */
export interface TelegramPendingPairing {
  code: string;
  sender_id: string;
  display_name: string;
  username: string | null;
  chat_type: TelegramChatType;
  /** ISO 8601 */
  requested_at: string;
  /** ISO 8601: the code stops working then */
  expires_at: string;
}

/** A sender the owner approved (`POST …/pairings/{code}/approve` answers with one). */
export interface TelegramApprovedSender {
  sender_id: string;
  display_name: string;
  username: string | null;
  /** ISO 8601 */
  approved_at: string;
}

/** `GET /api/channels/telegram/pairings` */
export interface TelegramPairingsResponse {
  pending: TelegramPendingPairing[];
  senders: TelegramApprovedSender[];
}

/** additive on a session list entry: the chat belongs to a channel conversation. */
export interface SessionChannel {
  kind: ChannelKind;
  display_name: string;
  sender_id: string;
  chat_type: TelegramChatType;
}

/** additive on a stored (and listed) user message that arrived through a channel: who sent it, from where. */
export interface ChannelMessageSource {
  channel: ChannelKind;
  /** the bot's id or username */
  account: string;
  sender_id: string;
  display_name: string;
}

/** REST paths of the channels (sub-routes built with `channelPath`). */
export const CHANNEL_API_PATHS = {
  channels: '/api/channels',
  telegram: '/api/channels/telegram',
  telegramPairings: '/api/channels/telegram/pairings',
  telegramSenders: '/api/channels/telegram/senders',
} as const;

/** `base` followed by the URL-encoded `segments`, e.g. `channelPath(CHANNEL_API_PATHS.telegramSenders, id)`. */
export function channelPath(base: (typeof CHANNEL_API_PATHS)[keyof typeof CHANNEL_API_PATHS], ...segments: string[]): string {
  return [base, ...segments.map((segment) => encodeURIComponent(segment))].join('/');
}
