import { ChangeDetectionStrategy, Component, computed, effect, inject, signal, untracked, viewChild } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { ActivatedRoute, Router } from '@angular/router';
import { map } from 'rxjs';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import type { LlmSelection } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { Logo } from '../../shared/logo/logo';
import { ChatStore } from '../chat-store';
import { CHAT_ID_PARAM, decideChatUrl, validChatId } from '../chat-url';
import { Composer, type ComposerSubmission } from '../composer/composer';
import { MessageList } from '../message-list/message-list';
import { OnboardingCard } from '../onboarding-card/onboarding-card';

/** The chat view: conversation, inline errors, onboarding when no model is configured, and the composer. */
@Component({
  selector: 'cc-chat-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, MessageList, Composer, OnboardingCard, Icon, Logo],
  templateUrl: './chat-page.html',
  styleUrl: './chat-page.scss',
})
export class ChatPage {
  protected readonly store = inject(ChatStore);
  protected readonly i18n = inject(I18n);
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
  /** the URL names a chat that does not exist (or an id that cannot be one) */
  protected readonly notFound = computed(() => {
    const raw = this.routeId();
    if (raw === null) return false;
    if (validChatId(raw) === null) return true;
    return this.store.activeChatId() === raw && this.store.activeMissing();
  });

  constructor() {
    void this.store.loadModels();
    void this.store.loadLlmStatus();
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
        if (raw !== null && validChatId(raw) === null) return;
        const action = decideChatUrl({ urlId: raw, urlChanged, first, activeChatId, activePersisted, newChatPending });
        if (action.kind === 'open') this.store.open(action.chatId);
        else if (action.kind === 'newChat') this.store.newChat();
        else if (action.kind === 'navigate') void this.router.navigateByUrl(action.url, { replaceUrl: true });
      });
    });
  }

  /** "Start a new chat" of the not-found state. */
  protected startNewChat(): void {
    this.store.newChat();
    void this.router.navigateByUrl('/');
  }

  protected onSend(submission: ComposerSubmission): void {
    const result = this.store.send(submission.text, submission.selections);
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
