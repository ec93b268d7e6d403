import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChild } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import type { LlmSelection } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { Logo } from '../../shared/logo/logo';
import { ChatStore } from '../chat-store';
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

  constructor() {
    void this.store.loadModels();
    void this.store.loadLlmStatus();
  }

  protected onSend(submission: ComposerSubmission): void {
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
