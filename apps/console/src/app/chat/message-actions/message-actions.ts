import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, inject, input, output, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatTooltipModule } from '@angular/material/tooltip';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { ChatMessage } from '../chat-types';

/**
 * The action row under a message: Copy always; Edit on a persisted user message; Regenerate on the last answer;
 * Continue on a stopped last answer. The parent decides which actions are offered (nothing while a turn runs).
 */
@Component({
  selector: 'cc-message-actions',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatTooltipModule, Icon],
  template: `
    <div class="cc-actions" [class.cc-actions-user]="message().role === 'user'">
      <button mat-icon-button type="button" class="cc-action" (click)="copy()" [attr.aria-label]="copyLabel()"
        [matTooltip]="copyLabel()" data-testid="copy-message">
        <cc-icon [name]="copied() ? 'check' : 'copy'" />
      </button>
      @if (canEdit()) {
        <button mat-icon-button type="button" class="cc-action" (click)="edit.emit()" [attr.aria-label]="i18n.t('chat.action.edit')"
          [matTooltip]="i18n.t('chat.action.edit')" data-testid="edit-message">
          <cc-icon name="edit" />
        </button>
      }
      @if (canRegenerate()) {
        <button mat-icon-button type="button" class="cc-action" (click)="regenerate.emit()"
          [attr.aria-label]="i18n.t('chat.action.regenerate')" [matTooltip]="i18n.t('chat.action.regenerate')" data-testid="regenerate-answer">
          <cc-icon name="refresh" />
        </button>
      }
      @if (canContinue()) {
        <button mat-stroked-button type="button" class="cc-continue" (click)="continueAnswer.emit()" data-testid="continue-answer">
          <cc-icon name="send" />{{ i18n.t('chat.action.continue') }}
        </button>
      }
      <ng-content />
    </div>
  `,
  styles: `
    .cc-actions {
      display: flex;
      align-items: center;
      gap: 2px;
      min-height: 32px;
      color: var(--mat-sys-on-surface-variant);
      --cc-icon-size: 16px;
    }
    .cc-actions-user {
      justify-content: flex-end;
    }
    .cc-action {
      --mat-icon-button-state-layer-size: 32px;
      width: 32px;
      height: 32px;
      padding: 0;
    }
    .cc-continue {
      margin-left: 6px;
      gap: 4px;
    }
  `,
})
export class MessageActions {
  readonly message = input.required<ChatMessage>();
  readonly canEdit = input(false);
  readonly canRegenerate = input(false);
  readonly canContinue = input(false);
  readonly edit = output<void>();
  readonly regenerate = output<void>();
  readonly continueAnswer = output<void>();

  protected readonly i18n = inject(I18n);
  private readonly document = inject(DOCUMENT);
  protected readonly copied = signal(false);

  protected copyLabel(): string {
    return this.i18n.t(this.copied() ? 'chat.copied' : 'chat.action.copy');
  }

  protected async copy(): Promise<void> {
    try {
      await this.document.defaultView?.navigator.clipboard.writeText(this.message().content);
    } catch {
      return;
    }
    this.copied.set(true);
    setTimeout(() => this.copied.set(false), 2000);
  }
}
