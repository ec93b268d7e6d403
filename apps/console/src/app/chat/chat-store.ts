import { DestroyRef, Injectable, computed, inject, signal } from '@angular/core';
import { Router } from '@angular/router';
import type {
  ApprovalDecision,
  ApprovalRequestEvent,
  AttachmentReceipt,
  ElicitationAction,
  ElicitationValue,
  LlmModelEntry,
  LlmProvider,
  LlmProviderStatus,
  LlmSelection,
  ServerEvent,
} from '@cashcode/contracts';

import { ApiError, errorMessage } from '../core/api/api-error';
import { localizeProblem } from '../core/api/problem-messages';
import { ApprovalNotifier } from '../core/approvals/approval-notifier';
import { I18n, type MessageKey } from '../core/i18n/i18n';
import { ChatSocket } from '../core/socket/chat-socket';
import { WsEndpoint } from '../core/socket/ws-endpoint';
import { readStorage, writeStorage } from '../core/storage';
import { findCall, isPending } from './approval-state';
import { NO_SELECTIONS, type CapabilitySelections } from './capability-picker/capability-rules';
import { ChatApi } from './chat-api';
import { chatUrl } from './chat-url';
import type { ChatState, ChatThread } from './chat-types';
import { historyFailed, historyLoaded, historyLoading } from './history-merge';
import { reduceServerEvent } from './server-events';
import {
  activateChat,
  approvalDecisionSent,
  elicitationAnswerSent,
  chatsAwaitingApproval,
  chatsToReattach,
  connectionLost,
  dismissError,
  newChatRequested,
  sessionRemoved,
  sessionRenamed,
  sessionsLoaded,
  userMessageSent,
} from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';
import { buildMessageFrame } from './composer-rules';
import { parseLimitStatus } from '../usage/usage-format';
import { spendLimitRefusal } from '../usage/usage-messages';
import { CHAT_ACTION_REFUSALS, chatActionFrame, continueSent, editSent, regenerateSent } from './chat-actions-state';
import {
  MODEL_SELECTION_STORAGE_KEY,
  groupModels,
  parseStoredSelection,
  reconcileSelection,
} from './model-selection';

export const ACTIVE_CHAT_STORAGE_KEY = 'cashcode.activeChat';

export type SendResult = { ok: true } | { ok: false; error: MessageKey };

/**
 * The chat feature's store: sessions, the open chat, per-chat threads and generating flags, the model picker
 * and whether any model is configured. All transitions are pure functions (session-reducers.ts,
 * history-merge.ts, server-events.ts) over the types of chat-types.ts.
 */
@Injectable({ providedIn: 'root' })
export class ChatStore {
  private readonly socket = inject(ChatSocket);
  private readonly api = inject(ChatApi);
  private readonly endpoint = inject(WsEndpoint);
  private readonly destroyRef = inject(DestroyRef);
  private readonly i18n = inject(I18n);
  private readonly notifier = inject(ApprovalNotifier);
  private readonly router = inject(Router);

  private readonly state = signal<ChatState>(INITIAL_CHAT_STATE);
  private readonly historyRequests = new Map<string, number>();
  private historySequence = 0;
  private readyCount = 0;
  private started = false;

  // models and onboarding
  private readonly modelList = signal<LlmModelEntry[]>([]);
  private readonly providerStatus = signal<Partial<Record<LlmProvider, LlmProviderStatus>>>({});
  private readonly modelsLoadingFlag = signal(false);
  private readonly modelsFailure = signal<string | null>(null);
  /** chats whose running turn is a chat action (regenerate, edit, continue) */
  private readonly actionsRunning = new Set<string>();
  /**
   * chats where a turn this console neither sent nor replayed is streaming (a channel message, another client): its
   * answer shows as it comes, but its user message exists only in the history, read again when the turn is done
   */
  private readonly turnsElsewhere = new Set<string>();
  /** a message sent while New chat waited for its chat id: it goes to that chat once the id arrives */
  private heldMessage: { text: string; selections: CapabilitySelections; attachments: readonly AttachmentReceipt[] } | null = null;
  private readonly selected = signal<LlmSelection | null>(parseStoredSelection(readStorage(MODEL_SELECTION_STORAGE_KEY)));
  private readonly configured = signal<boolean | null>(null);
  private readonly sessionsFailure = signal<string | null>(null);
  /** chats whose history answered 404 (never saved): a URL naming one shows "not found" */
  private readonly missingChats = signal<ReadonlySet<string>>(new Set());

  readonly connection = this.socket.state;
  readonly sessions = computed(() => this.state().sessions);
  readonly sessionsError = this.sessionsFailure.asReadonly();
  readonly activeChatId = computed(() => this.state().activeChatId);
  readonly activeThread = computed<ChatThread | null>(() => {
    const { activeChatId, threads } = this.state();
    return activeChatId === null ? null : (threads[activeChatId] ?? null);
  });
  readonly messages = computed(() => this.activeThread()?.messages ?? []);
  readonly generating = computed(() => this.activeThread()?.generating ?? false);
  readonly chatError = computed(() => this.activeThread()?.error ?? null);
  readonly banner = computed(() => this.state().banner);
  readonly historyStatus = computed(() => this.activeThread()?.history ?? 'idle');
  readonly historyError = computed(() => this.activeThread()?.historyError ?? null);
  /** the open chat is a saved session (it has a URL, `/chat/<id>`) */
  readonly activePersisted = computed(() => {
    const { activeChatId, sessions } = this.state();
    return activeChatId !== null && sessions.some((session) => session.chat_id === activeChatId);
  });
  /** a new chat was asked for and its id has not arrived yet */
  readonly newChatPending = computed(() => this.state().pendingNewChat);
  /** the open chat does not exist on the server (its history is 404 and nothing happened in it here) */
  readonly activeMissing = computed(() => {
    const thread = this.activeThread();
    return (
      thread !== null &&
      this.missingChats().has(thread.chatId) &&
      !this.activePersisted() &&
      thread.messages.length === 0 &&
      !thread.generating
    );
  });
  /** chats with an approval waiting for the user */
  readonly awaitingApproval = computed(() => new Set(chatsAwaitingApproval(this.state())), {
    equal: (a, b) => a.size === b.size && [...a].every((id) => b.has(id)),
  });

  readonly models = this.modelList.asReadonly();
  readonly modelGroups = computed(() => groupModels(this.modelList()));
  readonly modelsLoading = this.modelsLoadingFlag.asReadonly();
  readonly modelsError = this.modelsFailure.asReadonly();
  readonly providerErrors = computed(() =>
    (Object.entries(this.providerStatus()) as [LlmProvider, LlmProviderStatus][])
      .filter(([, status]) => status.error)
      .map(([provider, status]) => ({ provider, error: status.error as string })),
  );
  readonly selection = this.selected.asReadonly();
  /** null while unknown */
  readonly llmConfigured = this.configured.asReadonly();

  /** Starts the store once: restores the open chat, loads sessions, connects the socket. */
  init(): void {
    if (this.started) return;
    this.started = true;
    const subscription = this.socket.events.subscribe((event) => this.handleEvent(event));
    this.destroyRef.onDestroy(() => subscription.unsubscribe());
    const restored = readStorage(ACTIVE_CHAT_STORAGE_KEY, 'session');
    if (restored) this.update((state) => activateChat(state, restored));
    void this.loadSessions();
    void this.endpoint.resolve().then(({ url, tokenMissing }) => {
      if (tokenMissing) this.update((state) => ({ ...state, banner: this.i18n.t('error.tokenRequired') }));
      this.socket.connect(url);
    });
  }

  // ---- sessions ----------------------------------------------------------------------------------------

  async loadSessions(): Promise<void> {
    try {
      const response = await this.api.listSessions();
      this.sessionsFailure.set(null);
      this.update((state) => sessionsLoaded(state, response.sessions));
    } catch (error) {
      this.sessionsFailure.set(errorMessage(error));
    }
  }

  /** Opens a chat (sidebar click): attach it on the gateway and load its history once. */
  open(chatId: string): void {
    if (this.state().activeChatId === chatId) return;
    this.update((state) => activateChat(state, chatId));
    this.socket.send({ type: 'attach', chat_id: chatId });
  }

  /**
   * Asks the gateway for a new chat; it opens when `attached` arrives. Asked before the socket is open (a click right
   * after the page loads), the connection's `ready` brings the new chat: the request is never dropped, so a session
   * list that arrives meanwhile does not open the latest chat instead.
   */
  newChat(): void {
    this.update(newChatRequested);
    this.socket.send({ type: 'new_chat' });
  }

  async rename(chatId: string, title: string): Promise<string | null> {
    const trimmed = title.trim();
    if (trimmed === '') return null;
    try {
      const response = await this.api.rename(chatId, trimmed);
      this.update((state) => sessionRenamed(state, response.chat_id, response.title));
      return null;
    } catch (error) {
      return errorMessage(error);
    }
  }

  async remove(chatId: string): Promise<string | null> {
    try {
      await this.api.remove(chatId);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) return errorMessage(error);
    }
    const wasActive = this.state().activeChatId === chatId;
    this.update((state) => sessionRemoved(state, chatId));
    const active = this.state().activeChatId;
    if (wasActive && active !== null) this.socket.send({ type: 'attach', chat_id: active });
    if (wasActive && active === null) this.newChat();
    await this.loadSessions();
    return null;
  }

  // ---- turns -------------------------------------------------------------------------------------------

  /** Sends a message of the open chat with the composer's chips (`mentioned_skills`, `selected_mcp_connectors`). */
  send(text: string, selections: CapabilitySelections = NO_SELECTIONS, attachments: readonly AttachmentReceipt[] = []): SendResult {
    if (this.state().pendingNewChat) {
      // New chat was pressed and its id is a round trip away: the message is for that chat, not the one still shown.
      // It is checked now (the composer keeps it on an error) and sent when `attached` (or `ready`) opens the chat;
      // a second one meanwhile stays in the composer.
      if (this.heldMessage !== null) return { ok: false, error: 'composer.error.noChat' };
      const checked = buildMessageFrame({ chatId: 'pending', text, selection: this.selected() });
      if (!checked.ok) return checked;
      if (this.socket.state() !== 'connected') return { ok: false, error: 'composer.error.notConnected' };
      this.heldMessage = { text, selections, attachments };
      return { ok: true };
    }
    const thread = this.activeThread();
    const result = buildMessageFrame({
      chatId: thread && thread.history === 'loaded' ? thread.chatId : null,
      text,
      selection: this.selected(),
      mentionedSkills: selections.skills,
      selectedMcpConnectors: selections.mcp,
      attachments: attachments.map((attachment) => attachment.path),
    });
    if (!result.ok) return result;
    if (!this.socket.send(result.frame)) return { ok: false, error: 'composer.error.notConnected' };
    this.update((state) =>
      userMessageSent(state, result.frame.chat_id, result.frame.content, result.frame.metadata, attachments),
    );
    return { ok: true };
  }

  /** Sends the message held while New chat was pending, once the new chat is open. */
  private sendHeldMessage(): void {
    const held = this.heldMessage;
    if (held === null || this.state().pendingNewChat) return;
    this.heldMessage = null;
    const sent = this.send(held.text, held.selections, held.attachments);
    if (!sent.ok) this.update((state) => ({ ...state, banner: this.i18n.t(sent.error) }));
  }

  /** Answers the last message of the open chat again (the old answer stays in the server's history, hidden). */
  regenerate(): boolean {
    return this.sendAction('regenerate', (state, chatId) => regenerateSent(state, chatId));
  }

  /** Resends a sent message with new text; what followed it is replaced by the new answer. */
  editMessage(messageId: number, text: string): SendResult {
    const message = this.activeThread()?.messages.find((entry) => entry.id === messageId);
    const content = text.trim();
    if (!message || message.role !== 'user' || typeof message.cursor !== 'number') {
      return { ok: false, error: 'composer.error.noChat' };
    }
    if (content === '') return { ok: false, error: 'composer.error.empty' };
    const edit = { cursor: message.cursor, content };
    const sent = this.sendAction('edit', (state, chatId) => editSent(state, chatId, messageId, content), edit);
    return sent ? { ok: true } : { ok: false, error: 'composer.error.notConnected' };
  }

  /** Continues the stopped last answer of the open chat. */
  continueAnswer(): boolean {
    return this.sendAction('continue', (state, chatId) => continueSent(state, chatId));
  }

  private sendAction(
    action: 'regenerate' | 'edit' | 'continue',
    apply: (state: ChatState, chatId: string) => ChatState,
    edit?: { cursor: number; content: string },
  ): boolean {
    const thread = this.activeThread();
    const selection = this.selected();
    if (!thread || thread.generating || selection === null) return false;
    if (!this.socket.send(chatActionFrame(thread.chatId, selection, action, edit))) return false;
    this.actionsRunning.add(thread.chatId);
    this.update((state) => apply(state, thread.chatId));
    return true;
  }

  /**
   * Retry of a failed prompt of the open chat: the same text and chips are sent again as a new turn (the failed
   * message stays in history, append-only).
   */
  retry(messageId: number): boolean {
    const message = this.activeThread()?.messages.find((entry) => entry.id === messageId);
    if (!message || message.role !== 'user' || !message.error) return false;
    return this.send(message.content, {
      skills: message.mentionedSkills ?? [],
      mcp: message.selectedMcpConnectors ?? [],
    }).ok;
  }

  stop(): boolean {
    const chatId = this.state().activeChatId;
    if (chatId === null) return false;
    return this.socket.send({ type: 'cancel', chat_id: chatId });
  }

  /**
   * Answers an approval card with the `approval` frame. False when the socket is not open (nothing was sent) or
   * the call no longer waits; the card shows the outcome once `approval_resolved` arrives.
   */
  decide(callId: string, decision: ApprovalDecision): boolean {
    const thread = Object.values(this.state().threads).find((entry) => {
      const at = findCall(entry, callId);
      return at !== null && isPending(entry.messages[at.message].tools[at.tool].approval);
    });
    if (!thread) return false;
    if (!this.socket.send({ type: 'approval', chat_id: thread.chatId, call_id: callId, decision })) return false;
    this.update((state) => approvalDecisionSent(state, thread.chatId, callId, decision));
    return true;
  }

  /**
   * Answers an MCP elicitation form with the `elicitation` frame. False when the socket is not open or the form no
   * longer waits; the card shows the outcome once `elicitation_resolved` arrives.
   */
  answerElicitation(elicitationId: string, action: ElicitationAction, content?: Record<string, ElicitationValue>): boolean {
    const thread = Object.values(this.state().threads).find((entry) =>
      entry.messages.some((message) => message.tools.some((tool) => tool.elicitation?.id === elicitationId && tool.elicitation.status === 'open')),
    );
    if (!thread) return false;
    const frame = {
      type: 'elicitation' as const,
      chat_id: thread.chatId,
      elicitation_id: elicitationId,
      action,
      ...(action === 'accept' && content ? { content } : {}),
    };
    if (!this.socket.send(frame)) return false;
    this.update((state) => elicitationAnswerSent(state, thread.chatId, elicitationId));
    return true;
  }

  dismissError(scope: 'chat' | 'banner'): void {
    const chatId = scope === 'chat' ? this.state().activeChatId : null;
    if (scope === 'chat' && chatId === null) return;
    this.update((state) => dismissError(state, chatId));
  }

  retryHistory(): void {
    const chatId = this.state().activeChatId;
    if (chatId !== null) void this.loadHistory(chatId);
  }

  // ---- models and onboarding ---------------------------------------------------------------------------

  async loadModels(): Promise<void> {
    this.modelsLoadingFlag.set(true);
    this.modelsFailure.set(null);
    try {
      const response = await this.api.models();
      this.modelList.set(response.models);
      this.providerStatus.set(response.providers ?? {});
      this.applySelection(reconcileSelection(this.selected(), response.models, response.last_used ?? null));
    } catch (error) {
      this.modelList.set([]);
      this.providerStatus.set({});
      this.modelsFailure.set(errorMessage(error));
    } finally {
      this.modelsLoadingFlag.set(false);
    }
  }

  selectModel(selection: LlmSelection): void {
    this.applySelection(selection);
  }

  async loadLlmStatus(): Promise<void> {
    try {
      const settings = await this.api.llmSettings();
      this.configured.set(settings.configured);
    } catch {
      // unknown: no onboarding card rather than a wrong one
      this.configured.set(null);
    }
  }

  // ---- internals ---------------------------------------------------------------------------------------

  /**
   * A WS `error` event with a known code shows the console's translation, like a REST problem with that code; a turn
   * refused by a spend limit names the limit, what was spent and when it resets.
   */
  private localizeError(event: ServerEvent): ServerEvent {
    if (event.event !== 'error' || event.code === undefined) return event;
    const limit = event.code === 'spend_limit_reached' ? parseLimitStatus(event.limit) : null;
    if (limit) return { ...event, detail: spendLimitRefusal(this.i18n, limit) };
    const detail = localizeProblem(this.i18n, event.code, event);
    return detail === undefined ? event : { ...event, detail };
  }

  private applySelection(selection: LlmSelection | null): void {
    this.selected.set(selection);
    writeStorage(MODEL_SELECTION_STORAGE_KEY, selection ? JSON.stringify(selection) : null);
  }

  private handleEvent(received: ServerEvent): void {
    const event = this.localizeError(received);
    const before = this.state();
    if (event.event === 'ready') {
      this.readyCount++;
      if (this.readyCount > 1) this.update(connectionLost);
      this.update((state) => reduceServerEvent(state, event));
      for (const chatId of chatsToReattach(this.state())) {
        if (chatId !== event.chat_id) this.socket.send({ type: 'attach', chat_id: chatId });
      }
      this.sendHeldMessage();
      return;
    }
    const streamChat = STREAM_EVENTS.has(event.event) && 'chat_id' in event ? event.chat_id : undefined;
    if (typeof streamChat === 'string' && !before.threads[streamChat]?.generating) this.turnsElsewhere.add(streamChat);
    this.update((state) => reduceServerEvent(state, event));
    if (event.event === 'attached') this.sendHeldMessage();
    if (event.event === 'approval_request') {
      if (!hasPendingApproval(before, event) && hasPendingApproval(this.state(), event)) this.announceApproval(event);
    } else if (event.event === 'done') {
      // an action stopped before anything was persisted left the old branch on the server: show it again
      const actionLeftNothing = this.actionsRunning.delete(event.chat_id) && event.answer_cursor === undefined;
      const ranElsewhere = this.turnsElsewhere.delete(event.chat_id);
      if (before.threads[event.chat_id]?.resync || actionLeftNothing || ranElsewhere) {
        void this.loadHistory(event.chat_id);
      }
      void this.loadSessions();
    } else if (event.event === 'error' && typeof event.chat_id === 'string') {
      this.turnsElsewhere.delete(event.chat_id);
      if (!this.state().threads[event.chat_id]?.generating) this.actionsRunning.delete(event.chat_id);
      // an action was refused before it ran: show what the server has again
      if (CHAT_ACTION_REFUSALS.has(event.code ?? '')) void this.loadHistory(event.chat_id);
    } else if (event.event === 'attached') {
      const thread = this.state().threads[event.chat_id];
      if (thread?.resync && !thread.generating) void this.loadHistory(event.chat_id);
    } else if (event.event === 'stop_ack') {
      const thread = this.state().threads[event.chat_id];
      if (before.threads[event.chat_id]?.generating && thread && !thread.generating) {
        void this.loadHistory(event.chat_id);
      }
    }
  }

  /** A new approval while the tab is hidden: a browser notification (when permitted) that opens its chat. */
  private announceApproval(event: ApprovalRequestEvent): void {
    const session = this.state().sessions.find((entry) => entry.chat_id === event.chat_id);
    const chat = session?.title.trim() || this.i18n.t('session.untitled');
    const preview = event.arguments.length > 140 ? `${event.arguments.slice(0, 139)}…` : event.arguments;
    this.notifier.notify(
      {
        tag: `approval:${event.call_id}`,
        title: this.i18n.t('approval.notificationTitle', { tool: event.tool }),
        body: this.i18n.t('approval.notificationBody', { chat, preview }),
      },
      () => {
        this.open(event.chat_id);
        void this.router.navigateByUrl(chatUrl(event.chat_id));
      },
    );
  }

  private update(change: (state: ChatState) => ChatState): void {
    const before = this.state();
    const next = change(before);
    if (next === before) return;
    this.state.set(next);
    if (next.activeChatId !== before.activeChatId) {
      writeStorage(ACTIVE_CHAT_STORAGE_KEY, next.activeChatId, 'session');
    }
    const active = next.activeChatId === null ? null : next.threads[next.activeChatId];
    if (active && active.history === 'idle') void this.loadHistory(active.chatId);
  }

  private async loadHistory(chatId: string): Promise<void> {
    const token = ++this.historySequence;
    this.historyRequests.set(chatId, token);
    this.update((state) => historyLoading(state, chatId));
    try {
      const response = await this.api.messages(chatId);
      if (!this.isCurrentRequest(chatId, token)) return;
      this.markMissing(chatId, false);
      this.update((state) => historyLoaded(state, chatId, response.messages));
    } catch (error) {
      if (!this.isCurrentRequest(chatId, token)) return;
      if (error instanceof ApiError && error.status === 404) {
        // not persisted yet (a new chat): nothing to show
        this.markMissing(chatId, true);
        this.update((state) => historyLoaded(state, chatId, []));
      } else {
        this.update((state) => historyFailed(state, chatId, errorMessage(error)));
      }
    }
  }

  private markMissing(chatId: string, missing: boolean): void {
    const current = this.missingChats();
    if (current.has(chatId) === missing) return;
    const next = new Set(current);
    if (missing) next.add(chatId);
    else next.delete(chatId);
    this.missingChats.set(next);
  }

  /** A response counts only for the latest request of that chat and while the chat is still open. */
  private isCurrentRequest(chatId: string, token: number): boolean {
    const current = this.historyRequests.get(chatId) === token;
    if (!current) return false;
    this.historyRequests.delete(chatId);
    if (this.state().activeChatId === chatId) return true;
    // stale: the user moved on; forget the load so it happens again when the chat is reopened
    this.update((state) =>
      state.threads[chatId]?.history === 'loading'
        ? { ...state, threads: { ...state.threads, [chatId]: { ...state.threads[chatId], history: 'idle' } } }
        : state,
    );
    return false;
  }
}

function hasPendingApproval(state: ChatState, event: ApprovalRequestEvent): boolean {
  const thread = state.threads[event.chat_id];
  const at = thread ? findCall(thread, event.call_id) : null;
  return at !== null && isPending(thread.messages[at.message].tools[at.tool].approval);
}

/** the events of a turn's answer as it streams */
const STREAM_EVENTS: ReadonlySet<ServerEvent['event']> = new Set(['delta', 'reasoning', 'tool_call', 'tool_result', 'stream_end']);
