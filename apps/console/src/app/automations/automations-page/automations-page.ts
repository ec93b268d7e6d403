import { ChangeDetectionStrategy, Component, DestroyRef, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatSlideToggleModule } from '@angular/material/slide-toggle';
import { MatSnackBar } from '@angular/material/snack-bar';
import { MatTooltipModule } from '@angular/material/tooltip';
import { RouterLink } from '@angular/router';
import type { Automation, AutomationRun } from '@cashcode/contracts';

import { chatUrl } from '../../chat/chat-url';
import { ApprovalNotifier } from '../../core/approvals/approval-notifier';
import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Banner } from '../../shared/banner/banner';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { EmptyState } from '../../shared/empty-state/empty-state';
import { Icon } from '../../shared/icon/icon';
import { ListSkeleton } from '../../shared/list-skeleton/list-skeleton';
import { PageHeader } from '../../shared/page-header/page-header';
import { relativeTime } from '../../shared/relative-time';
import { AutomationEditor } from '../automation-editor/automation-editor';
import { formatCost, runDuration, scheduleWords } from '../automation-format';
import { failedOutcome, outcomeKey } from '../automation-run';
import { formatDueTime } from '../automation-time';
import { AutomationsStore } from '../automations-store';

/**
 * The Automations page (openspec console "Requirement: Automations page"): each automation with its schedule in
 * words, next run and last outcome, pause and resume, run now, edit and delete; the editor; an automation's run
 * history (paged) with each run's outcome, cost, error and a link to its chat.
 */
@Component({
  selector: 'cc-automations-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatSlideToggleModule, MatTooltipModule, RouterLink, AutomationEditor, Banner, EmptyState, Icon, ListSkeleton, PageHeader],
  providers: [AutomationsStore],
  templateUrl: './automations-page.html',
  styleUrl: './automations-page.scss',
})
export class AutomationsPage {
  protected readonly store = inject(AutomationsStore);
  protected readonly i18n = inject(I18n);
  protected readonly notifier = inject(ApprovalNotifier);
  private readonly dialog = inject(MatDialog);
  private readonly snackBar = inject(MatSnackBar);
  private readonly now = signal(Date.now());

  constructor() {
    void this.store.load();
    const timer = setInterval(() => this.now.set(Date.now()), 30_000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }

  protected schedule(automation: Automation): string {
    return scheduleWords(automation.schedule, (key, params) => this.i18n.t(key, params), this.i18n.locale());
  }

  protected nextRun(automation: Automation): string {
    if (!automation.enabled) return this.i18n.t('automations.paused');
    return automation.next_run_at ? formatDueTime(automation.next_run_at, this.i18n.locale()) : this.i18n.t('automations.noNextRun');
  }

  protected outcome(run: AutomationRun): MessageKey {
    return outcomeKey(run.outcome);
  }

  protected failed(run: AutomationRun): boolean {
    return failedOutcome(run.outcome);
  }

  protected when(iso: string): string {
    return relativeTime(iso, this.now(), (key, params) => this.i18n.t(key, params), this.i18n.locale());
  }

  protected time(iso: string | null): string {
    return iso ? formatDueTime(iso, this.i18n.locale()) : '—';
  }

  protected cost(run: AutomationRun): string {
    return formatCost(run.cost_usd, this.i18n.locale());
  }

  protected duration(run: AutomationRun): string {
    return runDuration(run, (key, params) => this.i18n.t(key, params));
  }

  protected chatLink(run: AutomationRun): string | null {
    return run.chat_id ? chatUrl(run.chat_id) : null;
  }

  protected async runNow(automation: Automation): Promise<void> {
    if (await this.store.runNow(automation)) {
      this.snackBar.open(this.i18n.t('automations.started', { name: automation.name }), undefined, { duration: 3000 });
    }
  }

  protected async remove(automation: Automation): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('automations.deleteTitle'),
      body: this.i18n.t('automations.deleteBody', { name: automation.name }),
      confirm: this.i18n.t('common.delete'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.remove(automation);
  }
}
