/**
 * Which chat a channel conversation continues (openspec channels "Requirement: Channel conversations are chats"): a
 * conversation maps to one chat id (`tg-<bot>-<conversation>` at first, a new suffixed id after `/new`), and remembers
 * the untrusted senders (group members who are not the owner) whose messages are in that chat, so every later turn
 * of the chat counts them for memory provenance. One file per channel: `<dataDir>/channels/<kind>/conversations.json`.
 */
import { randomBytes } from 'node:crypto';
import { CHAT_ID_PATTERN, isRecord, type ChannelKind, type TelegramChatType, type UntrustedSource } from '@cashcode/contracts';
import { JsonStateFile } from './json-state-file';

export interface UntrustedSender {
  sender_id: string;
  display_name: string;
}

export interface ConversationEntry {
  chat_id: string;
  chat_type: TelegramChatType;
  /** the person's name (private chat) or the group's title */
  display_name: string;
  /** the person's id (private chat) or the group's chat id */
  sender_id: string;
  untrusted: UntrustedSender[];
  /** the chat was deleted: the next message starts a new chat (with a fresh id) */
  retired?: boolean;
}

interface ConversationsState {
  version: 1;
  conversations: Record<string, ConversationEntry>;
}

/** untrusted senders remembered per chat (the oldest are dropped past it; the chat keeps its mark anyway) */
const MAX_UNTRUSTED_PER_CHAT = 50;

function parse(raw: unknown): ConversationsState {
  if (!isRecord(raw) || !isRecord(raw['conversations'])) throw new Error('not a conversations file');
  const conversations: Record<string, ConversationEntry> = {};
  for (const [key, value] of Object.entries(raw['conversations'])) {
    if (isRecord(value) && typeof value['chat_id'] === 'string' && CHAT_ID_PATTERN.test(value['chat_id'])) {
      conversations[key] = { ...(value as unknown as ConversationEntry), untrusted: Array.isArray(value['untrusted']) ? (value['untrusted'] as UntrustedSender[]) : [] };
    }
  }
  return { version: 1, conversations };
}

/** A chat id for a conversation: `<prefix>-<conversation>` (plus a random suffix for a fresh one), within CHAT_ID_PATTERN. */
export function conversationChatId(prefix: string, conversationId: string, fresh: boolean): string {
  const safe = `${prefix}-${conversationId}`.replace(/[^A-Za-z0-9_:-]/g, '_').slice(0, 48);
  return fresh ? `${safe}-${randomBytes(4).toString('hex')}` : safe;
}

/** A chat's untrusted senders as memory-provenance sources (`telegram Dave (8080)`). */
export function untrustedSources(kind: ChannelKind, members: readonly UntrustedSender[]): UntrustedSource[] {
  return members.map((member) => ({ kind: 'channel_message', name: `${kind} ${member.display_name} (${member.sender_id})` }));
}

export class ChannelConversationsStore {
  private readonly file: JsonStateFile<ConversationsState>;

  constructor(path: string) {
    this.file = new JsonStateFile(path, () => ({ version: 1, conversations: {} }), parse);
  }

  async get(conversationId: string): Promise<ConversationEntry | null> {
    const entry = (await this.file.read()).conversations[conversationId];
    return entry ? structuredClone(entry) : null;
  }

  /** The conversation a chat belongs to, or null. */
  async byChat(chatId: string): Promise<{ conversationId: string; entry: ConversationEntry } | null> {
    for (const [conversationId, entry] of Object.entries((await this.file.read()).conversations)) {
      if (entry.chat_id === chatId) return { conversationId, entry: structuredClone(entry) };
    }
    return null;
  }

  /** Whether the chat id is (or was last) the chat of a conversation. Synchronous over the loaded state. */
  async chatIds(): Promise<Set<string>> {
    return new Set(Object.values((await this.file.read()).conversations).map((entry) => entry.chat_id));
  }

  /** Stores the conversation's entry (a new one, or a new chat after `/new`). */
  async put(conversationId: string, entry: ConversationEntry): Promise<void> {
    await this.file.update((draft) => {
      draft.conversations[conversationId] = structuredClone(entry);
    });
  }

  /** Retires the conversation's chat when it is this one (the chat was deleted): its next message starts a new one. */
  async forgetChat(conversationId: string, chatId: string): Promise<void> {
    if ((await this.get(conversationId))?.chat_id !== chatId) return;
    await this.file.update((draft) => {
      const entry = draft.conversations[conversationId];
      if (entry?.chat_id === chatId) entry.retired = true;
    });
  }

  /** Remembers an untrusted sender of the conversation's current chat; returns the list after it. */
  async addUntrusted(conversationId: string, sender: UntrustedSender): Promise<UntrustedSender[]> {
    const entry = await this.get(conversationId);
    if (!entry) return [];
    if (entry.untrusted.some((known) => known.sender_id === sender.sender_id)) return entry.untrusted;
    return this.file.update((draft) => {
      const current = draft.conversations[conversationId];
      if (!current) return [];
      current.untrusted = [...current.untrusted, sender].slice(-MAX_UNTRUSTED_PER_CHAT);
      return structuredClone(current.untrusted);
    });
  }
}
