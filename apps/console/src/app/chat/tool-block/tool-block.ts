import { ChangeDetectionStrategy, Component, computed, inject, input, signal } from '@angular/core';
import { MatProgressBarModule } from '@angular/material/progress-bar';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { ToolBlockState, ToolStatus } from '../chat-types';
import { formatDuration, prettyArguments, summarizeArguments } from './tool-format';
import { progressPercent } from '../tool-live-state';

const STATUS_LABELS: Record<ToolStatus, MessageKey> = {
  awaiting: 'tool.awaiting',
  running: 'tool.running',
  ok: 'tool.ok',
  error: 'tool.error',
  interrupted: 'tool.interrupted',
  denied: 'tool.denied',
};

/** One tool call: name, arguments summary, status, duration; expands to the full arguments and result preview. */
@Component({
  selector: 'cc-tool-block',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatProgressSpinnerModule, MatProgressBarModule, Icon],
  templateUrl: './tool-block.html',
  styleUrl: './tool-block.scss',
  host: { '[attr.data-status]': 'tool().status', '[attr.data-call-id]': 'tool().callId' },
})
export class ToolBlock {
  readonly tool = input.required<ToolBlockState>();

  protected readonly i18n = inject(I18n);
  protected readonly expanded = signal(false);

  protected readonly summary = computed(() => summarizeArguments(this.tool().arguments));
  protected readonly fullArguments = computed(() => prettyArguments(this.tool().arguments));
  protected readonly statusLabel = computed(() => this.i18n.t(STATUS_LABELS[this.tool().status]));
  protected readonly duration = computed(() => {
    const ms = this.tool().durationMs;
    return ms === null ? '' : formatDuration(ms);
  });
  protected readonly preview = computed(() => (this.tool().result ?? '').replace(/\s+/g, ' ').trim());
  protected readonly percent = computed(() => {
    const progress = this.tool().progress;
    return progress ? progressPercent(progress) : null;
  });
  protected readonly progressText = computed(() => {
    const progress = this.tool().progress;
    if (!progress) return '';
    const count =
      progress.total !== undefined
        ? this.i18n.t('tool.progress', { progress: String(progress.progress), total: String(progress.total) })
        : this.i18n.t('tool.progressUnknown', { progress: String(progress.progress) });
    return progress.message ? `${count} · ${progress.message}` : count;
  });
  protected readonly expandable = computed(() => this.tool().arguments.trim() !== '' || (this.tool().result ?? '') !== '');
}
