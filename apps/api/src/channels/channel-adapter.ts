/**
 * The one interface a messaging channel implements (ARCHITECTURE.md "Channels"): what comes in (a message, a button
 * press) and what the server can do in a conversation (send, edit and delete a message, send a file, ask with buttons,
 * show "typing"). Everything else — pairing, which chat a conversation maps to, turns, approvals, streaming — is the
 * channel framework's (channel-turns.service.ts), the same for every channel.
 */
import type { ChannelKind, TelegramChatType } from '@cashcode/contracts';

/** A conversation of the channel: a private chat with one person, or a group. */
export interface ChannelConversation {
  /** the channel's own id of the conversation (a Telegram chat id) */
  id: string;
  type: TelegramChatType;
  /** a group's title; the person's name for a private chat */
  title: string;
}

export interface ChannelSender {
  id: string;
  displayName: string;
  username: string | null;
}

/** A file that came with a message, fetched from the channel only when the turn wants it. */
export interface InboundFile {
  kind: 'photo' | 'document';
  name: string;
  /** as the channel announced it (null: unknown until downloaded) */
  size: number | null;
  /** downloads the file; refuses (throws) past `maxBytes` */
  download(maxBytes: number): Promise<Buffer>;
}

export interface InboundMessage {
  conversation: ChannelConversation;
  sender: ChannelSender;
  /** the text or caption ('' for a file without caption); a leading bot mention of a group message is removed */
  text: string;
  files: InboundFile[];
  /** a group message that mentions the bot (or answers one of its messages); always true in a private chat */
  addressed: boolean;
  /** a kind of message the agent cannot read (a voice message, a sticker, …): named for the reply */
  unsupported?: string;
}

/** A press of one of the buttons of `ask`. */
export interface InboundAction {
  conversation: ChannelConversation;
  sender: ChannelSender;
  /** the button's data as the channel delivered it (never trusted: mapped server-side) */
  data: string;
  /** the message the button belongs to */
  messageId: string;
  /** answers the press (a short notice the presser sees); called exactly once */
  answer(text?: string): Promise<void>;
}

export interface ChannelButton {
  label: string;
  data: string;
}

/** What the framework asks of a channel. Text is Markdown; the adapter renders and splits it for its platform. */
export interface ChannelAdapter {
  readonly kind: ChannelKind;
  /** the account name shown as the `account` of recorded messages (the bot's username) */
  readonly account: string;
  /** Markdown rendered as the channel's messages (each within its length limit) */
  render(markdown: string): string[];
  /**
   * sends one rendered message; returns its id. A rendering the platform refuses is sent again as plain text (the
   * adapter's concern), so a send never fails because of formatting.
   */
  sendMessage(conversationId: string, rendered: string): Promise<string>;
  /** replaces the text of a sent message (an unchanged text is not an error) */
  editMessage(conversationId: string, messageId: string, rendered: string): Promise<void>;
  deleteMessage(conversationId: string, messageId: string): Promise<void>;
  sendFile(conversationId: string, name: string, data: Buffer, caption?: string): Promise<string>;
  /** a message with buttons (one row) */
  ask(conversationId: string, rendered: string, buttons: ChannelButton[]): Promise<string>;
  /** replaces a question's text and removes its buttons (after the answer) */
  closeQuestion(conversationId: string, messageId: string, rendered: string): Promise<void>;
  /** shows "typing…" for a few seconds */
  typing(conversationId: string): Promise<void>;
}

/** What an adapter hands to the framework. */
export interface ChannelInbound {
  onMessage(adapter: ChannelAdapter, message: InboundMessage): Promise<void>;
  onAction(adapter: ChannelAdapter, action: InboundAction): Promise<void>;
}
