import { ChangeDetectionStrategy, Component, DestroyRef, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSnackBar } from '@angular/material/snack-bar';
import type { SkillEvolutionProposal } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Banner } from '../../shared/banner/banner';
import { EmptyState } from '../../shared/empty-state/empty-state';
import { Icon } from '../../shared/icon/icon';
import { ListSkeleton } from '../../shared/list-skeleton/list-skeleton';
import { PageHeader } from '../../shared/page-header/page-header';
import { relativeTime } from '../../shared/relative-time';
import { EvolutionStore, type ReviewAction } from '../evolution-store';
import { diffLines, type DiffLine } from '../evolution-view';

/**
 * Evolution view: Skill proposals generated from recurring work (pending first), each with its candidate SKILL.md,
 * validation result, the (redacted) evidence it came from, a diff against the current Skill, Approve and Reject.
 */
@Component({
  selector: 'cc-evolution-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, Banner, EmptyState, Icon, ListSkeleton, PageHeader],
  providers: [EvolutionStore],
  templateUrl: './evolution-page.html',
  styleUrl: './evolution-page.scss',
})
export class EvolutionPage {
  protected readonly store = inject(EvolutionStore);
  protected readonly i18n = inject(I18n);
  private readonly snackBar = inject(MatSnackBar);

  private readonly now = signal(Date.now());

  constructor() {
    void this.store.load();
    const timer = setInterval(() => this.now.set(Date.now()), 30_000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }

  protected statusKey(proposal: SkillEvolutionProposal): MessageKey {
    return `evolution.status.${proposal.status}`;
  }

  protected actionKey(proposal: SkillEvolutionProposal): MessageKey {
    return `evolution.action.${proposal.action}`;
  }

  protected when(proposal: SkillEvolutionProposal): string {
    return relativeTime(proposal.created_at, this.now(), (key, params) => this.i18n.t(key, params), this.i18n.locale());
  }

  protected lines(diff: string): DiffLine[] {
    return diffLines(diff);
  }

  protected async review(proposal: SkillEvolutionProposal, action: ReviewAction): Promise<void> {
    const ok = await this.store.review(action);
    if (!ok) return;
    const message = action === 'approve' ? this.i18n.t('evolution.approved', { name: proposal.name }) : this.i18n.t('evolution.rejected');
    this.snackBar.open(message, undefined, { duration: 4000 });
  }
}
