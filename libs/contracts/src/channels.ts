/**
 * Channels (`/api/channels*`, openspec channels): messaging apps through which the owner (and, in groups, people the
 * owner let in) reach the agent. A channel conversation is a normal chat of the server; these are the shapes of the
 * settings page, the pairing list, the session-list badge and the `source` of a channel message in history.
 */

export type ChannelKind = 'telegram';
export const CHANNEL_KINDS: readonly ChannelKind[] = ['telegram'];

/** `connecting`: polling is (re)starting or backing off after an outage; `error`: stopped until the settings change. */
export type ChannelStatus = 'disabled' | 'connecting' | 'connected' | 'error';

export interface ChannelListEntry {
  kind: ChannelKind;
  enabled: boolean;
  status: ChannelStatus;
}

/** `GET /api/channels` */
export interface ChannelListResponse {
  channels: ChannelListEntry[];
}

/** The model a channel's turns use (the console picks it per message; a channel has one). */
export interface ChannelModelSelection {
  provider: string;
  model: string;
}

/** `GET /api/channels/telegram` (and the answer of PUT): the bot token is never returned, only whether one is set. */
export interface TelegramChannelSettings {
  enabled: boolean;
  token_set: boolean;
  /** the token's last four characters after an ellipsis, e.g. `…AbCd`; null without a token */
  token_hint: string | null;
  /** the Bot API server the token is bound to (CASHCODE_TELEGRAM_API_ROOT, default https://api.telegram.org) */
  api_root: string;
  groups_enabled: boolean;
  status: ChannelStatus;
  /** why the status is `error` (or why `connecting` is retrying); null otherwise */
  error: string | null;
  /** the bot's @username once getMe answered; null before */
  bot_username: string | null;
  /**
   * additive: the model the channel's turns use; null → the last model a console turn used, else the background
   * model of the LLM settings
   */
  model: ChannelModelSelection | null;
}

/** `PUT /api/channels/telegram`: every field optional; `token` is write-only and `""` clears it. */
export interface UpdateTelegramChannelRequest {
  enabled?: boolean;
  token?: string;
  groups_enabled?: boolean;
  /** additive: null clears the channel's own model choice */
  model?: ChannelModelSelection | null;
}

export type TelegramChatType = 'private' | 'group' | 'supergroup';

/**
 * A pairing request: someone wrote to the bot and got `code`. In a group it is the group that asks to be let in
 * (`sender_id` is the group's chat id, `display_name` its title); approving it lets the group's members talk to the
 * agent as untrusted senders, never as the owner.
 */
export interface TelegramPairingRequest {
  code: string;
  sender_id: string;
  display_name: string;
  username: string | null;
  chat_type: TelegramChatType;
  /** ISO 8601 with offset */
  requested_at: string;
  expires_at: string;
}

/**
 * An approved sender. `kind: 'user'` (paired from a private chat) is the owner: its messages are the owner's and only
 * it may press approval buttons. `kind: 'group'` is a group whose members may talk to the agent (untrusted input).
 */
export interface TelegramApprovedSender {
  sender_id: string;
  display_name: string;
  username: string | null;
  approved_at: string;
  /** additive */
  kind: 'user' | 'group';
}

/** `GET /api/channels/telegram/pairings` */
export interface TelegramPairingsResponse {
  pending: TelegramPairingRequest[];
  senders: TelegramApprovedSender[];
}

/** Session-list entries of a chat that belongs to a channel conversation (`GET /api/sessions`). */
export interface SessionChannelInfo {
  kind: ChannelKind;
  display_name: string;
  sender_id: string;
  chat_type: TelegramChatType;
}

/** A channel user message's `source` in history (`GET /api/sessions/{id}/messages` returns it on the user row). */
export interface ChannelMessageSource {
  channel: ChannelKind;
  /** the bot's @username (or its id before getMe answered) */
  account: string;
  sender_id: string;
  display_name: string;
  /** additive: false for a group member who is not the owner (untrusted input) */
  owner?: boolean;
}

const MAX_PERSISTED_NAME_CHARS = 256;

function shortString(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_PERSISTED_NAME_CHARS;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** A persisted `channel` entry of a chat's metadata as the session list shows it; null when it is not a valid one. */
export function sessionChannelInfo(value: unknown): SessionChannelInfo | null {
  const record = asRecord(value);
  if (!record || !(CHANNEL_KINDS as readonly unknown[]).includes(record['kind'])) return null;
  const { display_name: name, sender_id: sender, chat_type: type } = record;
  if (!shortString(name) || !shortString(sender) || !['private', 'group', 'supergroup'].includes(type as string)) return null;
  return { kind: record['kind'] as ChannelKind, display_name: name, sender_id: sender, chat_type: type as TelegramChatType };
}

/** A persisted `source` of a user record; null when absent or not a valid one. */
export function channelMessageSource(value: unknown): ChannelMessageSource | null {
  const record = asRecord(value);
  if (!record || !(CHANNEL_KINDS as readonly unknown[]).includes(record['channel'])) return null;
  const { account, sender_id: sender, display_name: name, owner } = record;
  if (!shortString(account) || !shortString(sender) || !shortString(name)) return null;
  return {
    channel: record['channel'] as ChannelKind,
    account,
    sender_id: sender,
    display_name: name,
    ...(typeof owner === 'boolean' ? { owner } : {}),
  };
}
