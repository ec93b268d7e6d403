/**
 * The Telegram adapter (openspec channels "Requirement: Telegram"): the ChannelAdapter over grammY's Bot API client,
 * and the translation of Telegram updates into the framework's inbound messages and button presses. Answers go out as
 * HTML (telegram-format.ts); when Telegram refuses a rendering (400 "can't parse entities") it is sent again as plain
 * text, so a send never fails because of formatting. Files are downloaded from the Bot API's file endpoint with a
 * size bound. Edited messages are not updates the poller asks for (telegram-poller.ts), so an edit is never answered
 * twice.
 */
import { GrammyError, InputFile, type Api } from 'grammy';
import type { CallbackQuery, Message, Update, UserFromGetMe } from 'grammy/types';
import type { ChannelAdapter, ChannelButton, ChannelConversation, ChannelSender, InboundAction, InboundFile, InboundMessage } from '../channel-adapter';
import { renderTelegramMessages } from './telegram-format';

function isParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

/** The visible text of a rendering (tags dropped, entities decoded): what is sent when the HTML is refused. */
export function plainOf(rendered: string): string {
  let text = '';
  let inTag = false;
  for (const char of rendered) {
    if (char === '<') inTag = true;
    else if (char === '>' && inTag) inTag = false;
    else if (!inTag) text += char;
  }
  return text
    .replace(/&(amp|lt|gt|quot);/g, (_all, name: string) => (name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : '"'));
}

/** message kinds answered with "not supported" (service messages such as a member joining get nothing) */
const UNSUPPORTED_KINDS = ['voice', 'audio', 'video', 'video_note', 'sticker', 'animation', 'location', 'contact', 'poll', 'venue', 'dice'] as const;

function senderOf(user: { id: number; first_name: string; last_name?: string; username?: string }): ChannelSender {
  const displayName = [user.first_name, user.last_name].filter((part) => part && part.trim() !== '').join(' ').slice(0, 128) || String(user.id);
  return { id: String(user.id), displayName, username: user.username ?? null };
}

function conversationOf(chat: Message['chat'], sender: ChannelSender): ChannelConversation | null {
  if (chat.type === 'channel') return null;
  const title = chat.type === 'private' ? sender.displayName : (chat.title || 'a group').slice(0, 128);
  return { id: String(chat.id), type: chat.type, title };
}

export class TelegramAdapter implements ChannelAdapter {
  readonly kind = 'telegram' as const;
  readonly account: string;

  constructor(
    private readonly api: Api,
    readonly me: UserFromGetMe,
    /** `<api root>/file/bot<token>`: where getFile's `file_path` is downloaded from */
    private readonly fileBase: string,
  ) {
    this.account = me.username ?? String(me.id);
  }

  render(markdown: string): string[] {
    return renderTelegramMessages(markdown);
  }

  async sendMessage(conversationId: string, rendered: string): Promise<string> {
    try {
      const sent = await this.api.sendMessage(conversationId, rendered, { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
      return String(sent.message_id);
    } catch (error) {
      if (!isParseError(error)) throw error;
      const sent = await this.api.sendMessage(conversationId, plainOf(rendered), { link_preview_options: { is_disabled: true } });
      return String(sent.message_id);
    }
  }

  async editMessage(conversationId: string, messageId: string, rendered: string): Promise<void> {
    try {
      await this.api.editMessageText(conversationId, Number(messageId), rendered, { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
    } catch (error) {
      if (isNotModified(error)) return;
      if (!isParseError(error)) throw error;
      await this.api.editMessageText(conversationId, Number(messageId), plainOf(rendered)).catch((again: unknown) => {
        if (!isNotModified(again)) throw again;
      });
    }
  }

  async deleteMessage(conversationId: string, messageId: string): Promise<void> {
    await this.api.deleteMessage(conversationId, Number(messageId));
  }

  async sendFile(conversationId: string, name: string, data: Buffer, caption?: string): Promise<string> {
    const sent = await this.api.sendDocument(conversationId, new InputFile(data, name), caption ? { caption } : {});
    return String(sent.message_id);
  }

  async ask(conversationId: string, rendered: string, buttons: ChannelButton[]): Promise<string> {
    const reply_markup = { inline_keyboard: [buttons.map((button) => ({ text: button.label, callback_data: button.data }))] };
    try {
      const sent = await this.api.sendMessage(conversationId, rendered, { parse_mode: 'HTML', reply_markup });
      return String(sent.message_id);
    } catch (error) {
      if (!isParseError(error)) throw error;
      const sent = await this.api.sendMessage(conversationId, plainOf(rendered), { reply_markup });
      return String(sent.message_id);
    }
  }

  async closeQuestion(conversationId: string, messageId: string, rendered: string): Promise<void> {
    // an edit without reply_markup removes the buttons
    await this.editMessage(conversationId, messageId, rendered);
  }

  async typing(conversationId: string): Promise<void> {
    await this.api.sendChatAction(conversationId, 'typing');
  }

  /** A message update as the framework's inbound message; null for what is not one (a channel post, a service message). */
  inboundMessage(update: Update): InboundMessage | null {
    const message = update.message;
    if (!message || !message.from || message.from.is_bot) return null;
    const sender = senderOf(message.from);
    const conversation = conversationOf(message.chat, sender);
    if (!conversation) return null;
    let text = message.text ?? message.caption ?? '';
    const entities = message.entities ?? message.caption_entities ?? [];
    const username = this.me.username?.toLowerCase();
    let addressed = conversation.type === 'private' || message.reply_to_message?.from?.id === this.me.id;
    for (const entity of entities) {
      const part = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
      if (entity.type === 'mention' && username && part === `@${username}`) addressed = true;
      // a command aimed at this bot, or at no bot in particular (Telegram delivers those to every bot of a group)
      if (entity.type === 'bot_command' && entity.offset === 0 && (!part.includes('@') || (username !== undefined && part.endsWith(`@${username}`)))) {
        addressed = true;
      }
    }
    if (username && conversation.type !== 'private') {
      const mention = `@${username}`;
      if (text.toLowerCase().startsWith(mention)) text = text.slice(mention.length).trimStart();
    }
    const files: InboundFile[] = [];
    const photo = message.photo?.[message.photo.length - 1];
    if (photo) files.push(this.file('photo', `photo-${message.message_id}.jpg`, photo.file_id, photo.file_size ?? null));
    if (message.document) {
      const name = message.document.file_name?.trim() || `document-${message.message_id}`;
      files.push(this.file('document', name, message.document.file_id, message.document.file_size ?? null));
    }
    if (text.trim() === '' && files.length === 0) {
      const kind = UNSUPPORTED_KINDS.find((key) => key in message);
      return kind ? { conversation, sender, text: '', files, addressed, unsupported: kind.replace('_', ' ') } : null;
    }
    return { conversation, sender, text, files, addressed };
  }

  /** A button press as the framework's inbound action; null when it has no message or data. */
  inboundAction(query: CallbackQuery): InboundAction | null {
    const message = query.message;
    if (!message || typeof query.data !== 'string') return null;
    const sender = senderOf(query.from);
    const conversation = conversationOf(message.chat, sender);
    if (!conversation) return null;
    let answered = false;
    return {
      conversation,
      sender,
      data: query.data,
      messageId: String(message.message_id),
      answer: async (text?: string) => {
        if (answered) return;
        answered = true;
        await this.api.answerCallbackQuery(query.id, text ? { text } : {});
      },
    };
  }

  private file(kind: InboundFile['kind'], name: string, fileId: string, size: number | null): InboundFile {
    return {
      kind,
      name,
      size,
      download: async (maxBytes: number) => {
        const info = await this.api.getFile(fileId);
        if (info.file_size !== undefined && info.file_size > maxBytes) throw new RangeError('too large');
        if (!info.file_path) throw new Error('no file path');
        const response = await fetch(`${this.fileBase}/${info.file_path}`);
        if (!response.ok || !response.body) throw new Error(`download failed: HTTP ${response.status}`);
        const chunks: Buffer[] = [];
        let total = 0;
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          total += chunk.length;
          if (total > maxBytes) throw new RangeError('too large');
          chunks.push(Buffer.from(chunk));
        }
        return Buffer.concat(chunks);
      },
    };
  }
}
