/**
 * The channel framework (openspec channels): what every channel adapter's messages go through. A message is let in
 * by pairing (channel-pairings.store.ts) — an unknown sender gets a pairing code and nothing else, the model is never
 * called — then either a command (`/stop`, `/new`, `/model`, `/help`) or a turn: its files stored like the console's
 * uploads (same size limits), the conversation's chat looked up (channel-conversations.store.ts) and the message
 * submitted through ChatService like a console message (history, memory, Skills, MCP, usage and spend limits,
 * approvals, cancel), recorded with its `source`. A group member who is not the owner is an untrusted sender: the
 * chat remembers them, every turn counts them for memory provenance, and their turns run as `requester: 'non_owner'`
 * (each call that is not read-only asks the owner). The chat's events come back from ChatService.events$ and are
 * streamed into the conversation (answer-stream.ts); approval requests become button questions (channel-approvals.ts).
 */
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import type { ChannelKind, ChannelMessageSource, LlmSelection, ServerEvent, UntrustedSource } from '@cashcode/contracts';
import { HISTORY_LOG, type HistoryLog } from '../agent/history-log';
import { ApprovalsService } from '../approvals/approvals.service';
import { AttachmentsService } from '../attachments/attachments.service';
import { formatBytes } from '../attachments/attachments.errors';
import { ChatService } from '../chat/chat.service';
import { errorType, formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { LLM_CLIENT_PROVIDER, type LlmClientProvider } from '../llm-settings/llm-provider';
import type { ChannelAdapter, InboundAction, InboundMessage } from './channel-adapter';
import { ChannelApprovals } from './channel-approvals';
import { ChannelConversationsStore, conversationChatId, untrustedSources as untrustedSourcesOf, type ConversationEntry } from './channel-conversations.store';
import { ChannelPairingsStore } from './channel-pairings.store';
import { AnswerStream, DEFAULT_EDIT_INTERVAL_MS } from './answer-stream';
import { HELP, PAIRING_REPLY_INTERVAL_MS, SHUTDOWN_NOTICE, SHUTDOWN_NOTICE_MS, TYPING_DELAY_MS } from './channel-texts';

/** What a registered channel tells the framework besides its adapter. */
export interface ChannelOptions {
  groupsEnabled(): boolean;
  /** the channel's own model choice, if any */
  model(): LlmSelection | null;
  /** prefix of the channel's chat ids, e.g. `tg-<bot id>` */
  chatPrefix: string;
}

interface Registered {
  adapter: ChannelAdapter;
  options: ChannelOptions;
}

interface Route {
  kind: ChannelKind;
  conversationId: string;
}

@Injectable()
export class ChannelTurnsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ChannelService');
  private readonly channels = new Map<ChannelKind, Registered>();
  private readonly pairingStores = new Map<ChannelKind, ChannelPairingsStore>();
  private readonly conversationStores = new Map<ChannelKind, ChannelConversationsStore>();
  /** chat id → the conversation it belongs to (every channel chat, loaded at registration) */
  private readonly routes = new Map<string, Route>();
  /** the answer being streamed per chat */
  private readonly streams = new Map<string, AnswerStream>();
  /** approval questions by button (shared with the owner's notices of chats no console follows) */
  readonly approvalButtons: ChannelApprovals;
  private events: Subscription | null = null;
  /** when each unknown sender was last told their pairing code */
  private readonly pairingReplies = new Map<string, number>();
  /** channel chats deleted in the console (their conversations start new chats) */
  private readonly deletedChats = new Set<string>();
  /** the shortest time between two edits of one answer (tests and the bench may shorten it) */
  editIntervalMs = DEFAULT_EDIT_INTERVAL_MS;

  constructor(
    private readonly chat: ChatService,
    approvals: ApprovalsService,
    private readonly attachments: AttachmentsService,
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    @Inject(HISTORY_LOG) private readonly history: HistoryLog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.approvalButtons = new ChannelApprovals(
      (chatId, callId, decision) => approvals.decide(chatId, callId, decision),
      (adapter, senderId) => this.pairings(adapter.kind).isOwner(senderId),
    );
  }

  onModuleInit(): void {
    this.events = this.chat.events$.subscribe(({ chatId, event }) => {
      const route = this.routes.get(chatId);
      if (route) this.onChatEvent(chatId, route, event);
    });
  }

  /** Shutdown: a streaming answer (or a silent running turn) ends with a notice to send again (bounded to a second). */
  async onModuleDestroy(): Promise<void> {
    this.events?.unsubscribe();
    const notices: Promise<void>[] = [];
    for (const [chatId, route] of this.routes) {
      const stream = this.streams.get(chatId);
      if (stream?.muted) continue;
      const adapter = this.channels.get(route.kind)?.adapter;
      if (stream) notices.push(stream.finish(SHUTDOWN_NOTICE));
      else if (adapter && this.chat.isRunning(chatId)) notices.push(this.say(adapter, route.conversationId, SHUTDOWN_NOTICE));
    }
    this.streams.clear();
    if (notices.length > 0) {
      await Promise.race([Promise.allSettled(notices), new Promise((resolve) => setTimeout(resolve, SHUTDOWN_NOTICE_MS).unref())]);
    }
  }

  pairings(kind: ChannelKind): ChannelPairingsStore {
    let store = this.pairingStores.get(kind);
    if (!store) {
      store = new ChannelPairingsStore(join(this.config.dataDir, 'channels', kind, 'pairings.json'));
      this.pairingStores.set(kind, store);
    }
    return store;
  }

  conversations(kind: ChannelKind): ChannelConversationsStore {
    let store = this.conversationStores.get(kind);
    if (!store) {
      store = new ChannelConversationsStore(join(this.config.dataDir, 'channels', kind, 'conversations.json'));
      this.conversationStores.set(kind, store);
    }
    return store;
  }

  /** A channel starts delivering: its conversations' chats are followed from now on. */
  async register(adapter: ChannelAdapter, options: ChannelOptions): Promise<void> {
    this.channels.set(adapter.kind, { adapter, options });
    const conversations = this.conversations(adapter.kind);
    for (const chatId of await conversations.chatIds()) {
      const found = await conversations.byChat(chatId);
      if (found) this.routes.set(chatId, { kind: adapter.kind, conversationId: found.conversationId });
    }
  }

  /** Whether the chat belongs to a channel conversation (its events are delivered there). */
  follows(chatId: string): boolean {
    return this.routes.has(chatId);
  }

  unregister(kind: ChannelKind): void {
    this.channels.delete(kind);
  }

  /**
   * A sender (or group) lost access: the running turn of each of its conversations is stopped and nothing more is
   * delivered there.
   */
  async revoked(kind: ChannelKind, senderId: string): Promise<void> {
    for (const [chatId, route] of this.routes) {
      if (route.kind !== kind) continue;
      const entry = await this.conversations(kind).get(route.conversationId);
      if (!entry || (entry.sender_id !== senderId && route.conversationId !== senderId)) continue;
      // a muted stream stays until the turn ends, so its end is not announced either
      const adapter = this.channels.get(kind)?.adapter;
      const muted = this.streams.get(chatId) ?? (adapter ? new AnswerStream(adapter, route.conversationId) : null);
      muted?.mute();
      if (muted) this.streams.set(chatId, muted);
      this.approvalButtons.forgetChat(chatId);
      if (this.chat.cancel(chatId)) this.logger.log(formatEvent('channel.turn.revoked', { channel: kind, chat_id: chatId }));
    }
  }

  /** A channel chat deleted in the console: the conversation's next message starts a new chat. */
  @OnAppEvent(SESSION_DELETED_EVENT)
  async onSessionDeleted(payload: SessionDeletedEvent): Promise<void> {
    const route = this.routes.get(payload.chatId);
    if (!route) return;
    // at once, before the file says so: a message arriving meanwhile must not go to the deleted chat
    this.deletedChats.add(payload.chatId);
    this.routes.delete(payload.chatId);
    this.streams.get(payload.chatId)?.mute();
    this.streams.delete(payload.chatId);
    await this.conversations(route.kind).forgetChat(route.conversationId, payload.chatId);
  }

  async onAction(adapter: ChannelAdapter, action: InboundAction): Promise<void> {
    if (await this.approvalButtons.onAction(adapter, action)) return;
    await action.answer('This button is not valid.');
  }

  async onMessage(adapter: ChannelAdapter, message: InboundMessage): Promise<void> {
    const registered = this.channels.get(adapter.kind);
    if (!registered) return;
    const { conversation, sender } = message;
    const group = conversation.type !== 'private';
    if (group && (!registered.options.groupsEnabled() || !message.addressed)) return;
    const pairings = this.pairings(adapter.kind);
    const owner = await pairings.isOwner(sender.id);
    const groupApproved = group && (await pairings.approved(conversation.id))?.kind === 'group';
    if (!owner && !groupApproved) {
      // an unknown sender (or a group nobody let in) gets a pairing code and nothing else
      const applicant = group
        ? { senderId: conversation.id, displayName: conversation.title, username: null, chatType: conversation.type }
        : { senderId: sender.id, displayName: sender.displayName, username: sender.username, chatType: conversation.type };
      const { code, fresh } = await pairings.request(applicant);
      this.logger.log(formatEvent('channel.pairing.requested', { channel: adapter.kind, chat_type: conversation.type, fresh }));
      // the code again at most once a minute: a flood from a stranger cannot make the bot flood (and meet Telegram's
      // rate limits, which would hold up everyone else's messages)
      const key = `${adapter.kind}:${applicant.senderId}`;
      const last = this.pairingReplies.get(key);
      if (!fresh && last !== undefined && Date.now() - last < PAIRING_REPLY_INTERVAL_MS) return;
      this.pairingReplies.set(key, Date.now());
      if (this.pairingReplies.size > 1_000) this.pairingReplies.delete(this.pairingReplies.keys().next().value as string);
      await this.say(adapter, conversation.id, `Pairing code: \`${code}\`\n\nThe owner of this CashCode can approve it in Settings → Channels.`);
      return;
    }
    if (message.unsupported) {
      await this.say(adapter, conversation.id, `I can read text, photos and documents; a ${message.unsupported} message is not supported.`);
      return;
    }
    const command = /^\/([a-z]+)(?:@\w+)?(?:\s|$)/i.exec(message.text.trim());
    if (command) {
      await this.command(adapter, registered, message, (command[1] as string).toLowerCase(), owner);
      return;
    }
    await this.turn(adapter, registered, message, owner);
  }

  private async command(adapter: ChannelAdapter, registered: Registered, message: InboundMessage, name: string, owner: boolean): Promise<void> {
    const conversationId = message.conversation.id;
    if ((name === 'stop' || name === 'new') && !owner) {
      await this.say(adapter, conversationId, 'Only the owner can use this command.');
      return;
    }
    switch (name) {
      case 'stop': {
        const entry = await this.conversations(adapter.kind).get(conversationId);
        const running = entry ? this.chat.cancel(entry.chat_id) : false;
        await this.say(adapter, conversationId, running ? 'Stopping.' : 'Nothing is running.');
        return;
      }
      case 'new': {
        const entry = await this.newChat(adapter, registered, message, true);
        this.logger.log(formatEvent('channel.chat.created', { channel: adapter.kind, chat_id: entry.chat_id }));
        await this.say(adapter, conversationId, 'New chat started.');
        return;
      }
      case 'model': {
        const selection = this.selection(registered);
        await this.say(adapter, conversationId, selection ? `Model: \`${selection.model}\` (${selection.provider})` : 'No model is chosen yet.');
        return;
      }
      default:
        await this.say(adapter, conversationId, HELP);
    }
  }

  private async turn(adapter: ChannelAdapter, registered: Registered, message: InboundMessage, owner: boolean): Promise<void> {
    const { conversation, sender } = message;
    const selection = this.selection(registered);
    if (!selection) {
      await this.say(adapter, conversation.id, 'No model is chosen for this channel yet: choose one in the console (Settings → Channels).');
      return;
    }
    const store = this.conversations(adapter.kind);
    const existing = await store.get(conversation.id);
    // a conversation whose chat was deleted gets a fresh chat id (the deleted one stays deleted)
    const live = existing && !existing.retired && !this.deletedChats.has(existing.chat_id);
    const entry = live ? existing : await this.newChat(adapter, registered, message, existing !== null);
    const paths: string[] = [];
    for (const file of message.files) {
      const limit = this.config.attachmentMaxBytes;
      let data: Buffer;
      try {
        if (file.size !== null && file.size > limit) throw new RangeError('too large');
        data = await file.download(limit);
      } catch (error) {
        const tooLarge = error instanceof RangeError;
        await this.say(adapter, conversation.id, tooLarge
          ? `The file ${file.name} is too large: files may be at most ${formatBytes(limit)}. Nothing was sent to the agent.`
          : `The file ${file.name} could not be downloaded; nothing was sent to the agent. Try again.`);
        return;
      }
      try {
        const [receipt] = await this.attachments.store(entry.chat_id, [{ originalname: file.name, buffer: data, size: data.length }]);
        if (receipt) paths.push(receipt.path);
      } catch (error) {
        await this.say(adapter, conversation.id, `The file ${file.name} was refused: ${error instanceof Error ? error.message : 'unknown error'}.`);
        return;
      }
    }
    // a group member's message is untrusted content of the chat: recorded on its user record, so this turn and every
    // later one (the console's too) count it for memory provenance
    let untrustedSources: UntrustedSource[] | undefined;
    if (!owner) {
      const member = { sender_id: sender.id, display_name: sender.displayName };
      await store.addUntrusted(conversation.id, member);
      untrustedSources = untrustedSourcesOf(adapter.kind, [member]);
    }
    const source: ChannelMessageSource = {
      channel: adapter.kind,
      account: adapter.account,
      sender_id: sender.id,
      display_name: sender.displayName,
      ...(owner ? {} : { owner: false }),
    };
    const content = message.text.trim() !== '' ? message.text : paths.length > 0 ? 'Here is a file.' : '';
    if (content === '') return;
    this.routes.set(entry.chat_id, { kind: adapter.kind, conversationId: conversation.id });
    const options = { source, ...(untrustedSources ? { untrustedSources, requester: 'non_owner' as const } : {}) };
    const result = this.chat.submit(entry.chat_id, content, { llm: selection }, paths, options);
    if (!result.accepted) {
      await this.say(adapter, conversation.id, result.detail);
      return;
    }
    this.logger.log(formatEvent('channel.message.accepted', { channel: adapter.kind, chat_id: entry.chat_id, queued: result.queued }));
    // "typing…" only when the answer does not start at once (a quick answer saves the Bot API call)
    const chatId = entry.chat_id;
    setTimeout(() => {
      if (!this.streams.get(chatId)?.answered) void adapter.typing(conversation.id).catch(() => undefined);
    }, TYPING_DELAY_MS).unref();
  }

  /** A fresh chat for the conversation (the first message, or `/new`), its `channel` badge in metadata.json. */
  private async newChat(adapter: ChannelAdapter, registered: Registered, message: InboundMessage, fresh: boolean): Promise<ConversationEntry> {
    const { conversation, sender } = message;
    const group = conversation.type !== 'private';
    const entry: ConversationEntry = {
      chat_id: conversationChatId(registered.options.chatPrefix, conversation.id, fresh),
      chat_type: conversation.type,
      display_name: group ? conversation.title : sender.displayName,
      sender_id: group ? conversation.id : sender.id,
      untrusted: [],
    };
    const chat = await this.history.getChat(entry.chat_id);
    await this.history.saveMetadata(entry.chat_id, {
      ...chat.metadata,
      channel: { kind: adapter.kind, display_name: entry.display_name, sender_id: entry.sender_id, chat_type: entry.chat_type },
    });
    await this.conversations(adapter.kind).put(conversation.id, entry);
    this.routes.set(entry.chat_id, { kind: adapter.kind, conversationId: conversation.id });
    return entry;
  }

  private selection(registered: Registered): LlmSelection | null {
    return registered.options.model() ?? this.llm.lastSelection() ?? this.llm.backgroundSelection();
  }

  private async say(adapter: ChannelAdapter, conversationId: string, markdown: string): Promise<void> {
    try {
      for (const rendered of adapter.render(markdown)) await adapter.sendMessage(conversationId, rendered);
    } catch (error) {
      this.logger.warn(formatEvent('channel.reply.failed', { channel: adapter.kind, error_type: errorType(error) }));
    }
  }

  /** The chat's events, delivered into its conversation. */
  private onChatEvent(chatId: string, route: Route, event: ServerEvent): void {
    const registered = this.channels.get(route.kind);
    if (!registered) return;
    const { adapter } = registered;
    const stream = (): AnswerStream => {
      let current = this.streams.get(chatId);
      if (!current) {
        current = new AnswerStream(adapter, route.conversationId, this.editIntervalMs);
        this.streams.set(chatId, current);
      }
      return current;
    };
    const end = (footer?: string): void => {
      const current = this.streams.get(chatId);
      this.streams.delete(chatId);
      if (current) void current.finish(footer);
      else if (footer) void this.say(adapter, route.conversationId, footer);
    };
    switch (event.event) {
      case 'delta':
        stream().append(event.text);
        return;
      case 'approval_request':
        void this.approvalButtons.ask(adapter, route.conversationId, event).catch((error: unknown) =>
          this.logger.warn(formatEvent('channel.approval.send_failed', { channel: route.kind, error_type: errorType(error) })),
        );
        return;
      case 'approval_resolved':
        void this.approvalButtons.resolved(event);
        return;
      case 'done':
      case 'error': {
        const current = this.streams.get(chatId);
        if (current?.muted) {
          this.streams.delete(chatId);
          return;
        }
        if (event.event === 'error') end(`⚠️ ${event.detail}`);
        else if (event.cancelled) end('_(stopped)_');
        else if (!current?.answered) end('_(no answer text)_');
        else end();
        return;
      }
      default:
        return;
    }
  }
}
