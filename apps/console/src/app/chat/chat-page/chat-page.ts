import { ChangeDetectionStrategy, Component, computed, effect, inject, signal, untracked, viewChild } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { ActivatedRoute, Router, RouterLink } from '@angular/router';
import { map } from 'rxjs';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import type { LlmSelection, SpendLimitStatus } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { Logo } from '../../shared/logo/logo';
import { ChatStore } from '../chat-store';
import { CHAT_ID_PARAM, decideChatUrl, validChatId } from '../chat-url';
import { lastUserText } from '../composer-recall';
import { EMPTY_QUEUE, enqueueMessage, queuedFor, removeQueued } from '../message-queue';
import { shortcutAction } from '../shortcuts';
import { ShortcutsDialog } from '../shortcuts-dialog/shortcuts-dialog';
import { Composer, type ComposerSubmission } from '../composer/composer';
import { MessageList } from '../message-list/message-list';
import { OnboardingCard } from '../onboarding-card/onboarding-card';
import { UsageLive } from '../../usage/usage-live';
import { limitBannerText } from '../../usage/usage-messages';

/** The chat view: conversation, inline errors, onboarding when no model is configured, and the composer. */
@Component({
  selector: 'cc-chat-page',
  host: { '(document:keydown)': 'onShortcut($event)' },
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, RouterLink, MessageList, Composer, OnboardingCard, Icon, Logo],
  templateUrl: './chat-page.html',
  styleUrl: './chat-page.scss',
})
export class ChatPage {
  protected readonly store = inject(ChatStore);
  protected readonly i18n = inject(I18n);
  /** the spend-limit banner (usage-live.ts) */
  protected readonly usage = inject(UsageLive);
  private readonly composer = viewChild.required(Composer);

  private readonly sendErrorKey = signal<MessageKey | null>(null);
  protected readonly sendError = computed(() => {
    const key = this.sendErrorKey();
    return key ? this.i18n.t(key) : null;
  });
  protected readonly chatReady = computed(() => this.store.historyStatus() === 'loaded');
  protected readonly showLoading = computed(
    () => this.store.historyStatus() === 'loading' && this.store.messages().length === 0,
  );

  private readonly router = inject(Router);
  /** the chat id in the URL (`/chat/<id>`), null on `/` */
  private readonly routeId = toSignal(inject(ActivatedRoute).paramMap.pipe(map((params) => params.get(CHAT_ID_PARAM))), {
    initialValue: null,
  });
  private lastRouteId: string | null | undefined = undefined;
  /** the chat id (null: `/`) of this page's own navigation that makes the URL follow the open chat, until it lands */
  private following: string | null | undefined = undefined;
  /** the URL names a chat that does not exist (or an id that cannot be one) */
  protected readonly notFound = computed(() => {
    const raw = this.routeId();
    if (raw === null) return false;
    if (validChatId(raw) === null) return true;
    return this.store.activeChatId() === raw && this.store.activeMissing();
  });

  constructor() {
    this.usage.start();
    void this.store.loadModels();
    void this.store.loadLlmStatus();
    this.watchQueue();
    // openspec console "Requirement: A URL per chat": the URL and the open chat follow each other (chat-url.ts)
    effect(() => {
      const raw = this.routeId();
      const activeChatId = this.store.activeChatId();
      const activePersisted = this.store.activePersisted();
      const newChatPending = this.store.newChatPending();
      untracked(() => {
        const urlChanged = raw !== this.lastRouteId;
        const first = this.lastRouteId === undefined;
        this.lastRouteId = raw;
        const followed = urlChanged && this.following !== undefined && raw === this.following;
        if (urlChanged) this.following = undefined;
        if (raw !== null && validChatId(raw) === null) return;
        const action = decideChatUrl({ urlId: raw, urlChanged, followed, first, activeChatId, activePersisted, newChatPending });
        if (action.kind === 'open') this.store.open(action.chatId);
        else if (action.kind === 'newChat') this.store.newChat();
        else if (action.kind === 'navigate') {
          this.following = action.urlId;
          void this.router.navigateByUrl(action.url, { replaceUrl: true });
        }
      });
    });
  }

  protected limitBanner(limit: SpendLimitStatus): string {
    return limitBannerText(this.i18n, limit);
  }

  /** "Start a new chat" of the not-found state. */
  protected startNewChat(): void {
    this.store.newChat();
    void this.router.navigateByUrl('/');
  }

  // ---- queue while streaming (message-queue.ts) ------------------------------------------------------------

  private readonly queue = signal(EMPTY_QUEUE);
  /** chats whose last turn failed: their queue waits for the user */
  private readonly pausedChats = signal<ReadonlySet<string>>(new Set());
  protected readonly queued = computed(() => queuedFor(this.queue(), this.store.activeChatId()));
  protected readonly queuePaused = computed(() => {
    const chatId = this.store.activeChatId();
    return chatId !== null && this.pausedChats().has(chatId) && this.queued().length > 0;
  });
  private lastTurn: { chatId: string | null; generating: boolean } = { chatId: null, generating: false };
  private readonly dialog = inject(MatDialog);

  private setPaused(chatId: string, paused: boolean): void {
    const current = this.pausedChats();
    if (current.has(chatId) === paused) return;
    const next = new Set(current);
    if (paused) next.add(chatId);
    else next.delete(chatId);
    this.pausedChats.set(next);
  }

  /** A turn that ended: with an error the queue pauses; otherwise queued messages go out one at a time. */
  private watchQueue(): void {
    effect(() => {
      const chatId = this.store.activeChatId();
      const generating = this.store.generating();
      const loaded = this.store.historyStatus() === 'loaded';
      const connected = this.store.connection() === 'connected';
      const queued = this.queued();
      const paused = this.queuePaused();
      untracked(() => {
        const ended = this.lastTurn.chatId === chatId && this.lastTurn.generating && !generating;
        this.lastTurn = { chatId, generating };
        if (chatId === null) return;
        if (ended && this.turnFailed()) {
          this.setPaused(chatId, true);
          return;
        }
        if (generating || !loaded || !connected || paused || queued.length === 0) return;
        const next = queued[0];
        if (this.store.send(next.text, next.selections, next.attachments ?? []).ok) this.queue.set(removeQueued(this.queue(), chatId, next.id));
        else this.setPaused(chatId, true);
      });
    });
  }

  private turnFailed(): boolean {
    if (this.store.chatError() !== null) return true;
    const last = this.store.messages().at(-1);
    return last?.role === 'user' && last.error !== undefined;
  }

  protected removeQueuedMessage(id: number): void {
    const chatId = this.store.activeChatId();
    if (chatId !== null) this.queue.set(removeQueued(this.queue(), chatId, id));
  }

  /** "Send now" of a paused queue: the next queued message goes out (when no answer streams). */
  protected resumeQueue(): void {
    const chatId = this.store.activeChatId();
    if (chatId !== null) this.setPaused(chatId, false);
  }

  // ---- shortcuts (shortcuts.ts) ------------------------------------------------------------------------------

  protected onShortcut(event: KeyboardEvent): void {
    const target = event.target;
    const typing =
      target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
    const overlayOpen = this.dialog.openDialogs.length > 0 || document.querySelector('.cdk-overlay-pane') !== null;
    const action = shortcutAction(event, { typing, generating: this.store.generating(), overlayOpen });
    if (action === null) return;
    event.preventDefault();
    switch (action) {
      case 'newChat':
        this.store.newChat();
        void this.router.navigateByUrl('/');
        return;
      case 'focusSearch':
        document.querySelector<HTMLElement>('[data-testid="session-search"]')?.focus();
        return;
      case 'stop':
        this.store.stop();
        return;
      case 'help':
        if (this.dialog.openDialogs.length === 0) {
          this.dialog.open(ShortcutsDialog, { ariaLabelledBy: 'cc-shortcuts-title', autoFocus: 'dialog' });
        }
        return;
    }
  }

  /** ↑ in an empty composer: the last user message of the chat, back in the composer for editing. */
  protected onRecall(): void {
    const text = lastUserText(this.store.messages());
    if (text !== null) this.composer().setText(text);
  }

  protected onSend(submission: ComposerSubmission): void {
    const chatId = this.store.activeChatId();
    if (this.store.generating() && chatId !== null) {
      // an answer streams: the message waits for the end of the turn
      this.queue.set(enqueueMessage(this.queue(), chatId, submission.text.trim(), submission.selections, submission.attachments));
      this.setPaused(chatId, false);
      this.composer().clear();
      return;
    }
    const result = this.store.send(submission.text, submission.selections, submission.attachments);
    if (result.ok) {
      this.sendErrorKey.set(null);
      this.composer().clear();
    } else {
      this.sendErrorKey.set(result.error);
    }
  }

  protected onStop(): void {
    this.store.stop();
  }

  protected onSelectModel(selection: LlmSelection): void {
    this.sendErrorKey.set(null);
    this.store.selectModel(selection);
  }
}
