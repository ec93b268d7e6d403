import { ChangeDetectionStrategy, Component, inject, input, output, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import type { DreamEntryProvenance, DreamRun } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { DiffView } from '../diff-view/diff-view';
import type { StatusMessage } from '../memory-store';

/** The Dream runs, newest first: outcome, model, records, entries, the diff of MEMORY.md, and Revert. */
@Component({
  selector: 'cc-dream-history',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, Icon, DiffView],
  templateUrl: './dream-history.html',
  styleUrl: './dream-history.scss',
})
export class DreamHistory {
  readonly runs = input.required<DreamRun[]>();
  readonly action = input.required<'idle' | 'running' | 'reverting'>();
  readonly message = input<StatusMessage | null>(null);

  readonly runNow = output<void>();
  readonly revert = output<DreamRun>();
  /** the owner applies the proposal of a run held for review */
  readonly apply = output<DreamRun>();

  protected readonly i18n = inject(I18n);
  /** runs whose diff is open */
  protected readonly open = signal<ReadonlySet<string>>(new Set());

  protected toggle(id: string): void {
    this.open.update((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  protected changeLabel(item: DreamEntryProvenance): string {
    return this.i18n.t(`memory.dream.change.${item.change}`);
  }

  protected trustLabel(item: DreamEntryProvenance): string {
    return this.i18n.t(`memory.sources.trust.${item.trust}`);
  }

  protected outcomeLabel(run: DreamRun): string {
    return this.i18n.t(`memory.dream.outcome.${run.outcome}`);
  }

  protected triggerLabel(run: DreamRun): string {
    return this.i18n.t(`memory.dream.trigger.${run.trigger}`);
  }

  protected when(run: DreamRun): string {
    return new Date(run.started_at).toLocaleString(this.i18n.locale());
  }
}
