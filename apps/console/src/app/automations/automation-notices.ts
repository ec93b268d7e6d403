import { DOCUMENT, DestroyRef, Injectable, inject } from '@angular/core';
import { MatSnackBar } from '@angular/material/snack-bar';
import { Router } from '@angular/router';
import type { AutomationRunEvent } from '@cashcode/contracts';

import { ChatStore } from '../chat/chat-store';
import { chatUrl } from '../chat/chat-url';
import { ApprovalNotifier } from '../core/approvals/approval-notifier';
import { I18n } from '../core/i18n/i18n';
import { ChatSocket } from '../core/socket/chat-socket';
import { automationRunEvent, failedOutcome, outcomeKey } from './automation-run';

/**
 * Tells the owner when an automation run ends, wherever the console is (openspec console "Requirement: Automations
 * page"): a browser notification while the tab is hidden (with the permission the approvals asked for, the same
 * notifier), else a snack bar; both open the run's chat. A run's chat then shows in the sidebar's history.
 */
@Injectable({ providedIn: 'root' })
export class AutomationNotices {
  private readonly socket = inject(ChatSocket);
  private readonly notifier = inject(ApprovalNotifier);
  private readonly snackBar = inject(MatSnackBar);
  private readonly router = inject(Router);
  private readonly i18n = inject(I18n);
  private readonly document = inject(DOCUMENT);
  private readonly destroyRef = inject(DestroyRef);
  private readonly chats = inject(ChatStore);
  private started = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    const subscription = this.socket.events.subscribe((event) => {
      const runEvent = automationRunEvent(event);
      if (runEvent) this.announce(runEvent);
    });
    this.destroyRef.onDestroy(() => subscription.unsubscribe());
  }

  /** A run that ended: a notification when the tab is hidden, else a snack bar. Starts are not announced. */
  announce(event: AutomationRunEvent): void {
    const { run } = event;
    if (run.outcome === 'running') return;
    if (run.chat_id) void this.chats.loadSessions();
    const name = event.automation_name || this.i18n.t('automations.unnamed');
    const outcome = this.i18n.t(outcomeKey(run.outcome));
    const title = this.i18n.t(failedOutcome(run.outcome) ? 'automations.notice.failedTitle' : 'automations.notice.title', { name });
    const body = run.error ? `${outcome}: ${run.error}` : outcome;
    const open = () => {
      if (run.chat_id) void this.router.navigateByUrl(chatUrl(run.chat_id));
      else void this.router.navigateByUrl('/automations');
    };
    if (this.document.visibilityState === 'hidden' && this.notifier.notify({ tag: `automation:${run.id}`, title, body }, open)) return;
    const ref = this.snackBar.open(`${title} · ${body}`, run.chat_id ? this.i18n.t('automations.notice.openChat') : undefined, {
      duration: 8000,
    });
    ref.onAction().subscribe(open);
  }
}
