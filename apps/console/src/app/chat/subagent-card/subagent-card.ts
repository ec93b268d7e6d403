import { ChangeDetectionStrategy, Component, computed, inject, input, signal } from '@angular/core';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { ChatStore } from '../chat-store';
import type { ToolBlockState } from '../chat-types';
import { formatDuration, summarizeArguments } from '../tool-block/tool-format';
import { SubagentApi } from './subagent-api';
import { viewFromBlock, viewFromTranscript, type SubagentCardStatus, type SubagentView } from './subagent-view';

const STATUS_LABELS: Record<SubagentCardStatus, MessageKey> = {
  running: 'subagent.running',
  ok: 'subagent.ok',
  failed: 'subagent.failed',
  cancelled: 'subagent.cancelled',
  interrupted: 'subagent.interrupted',
};

/**
 * A `delegate` call as a nested, collapsible card (openspec console "Requirement: Sub-agent card"): the task and
 * status in its head; open, the sub-agent's tool calls and its answer — live while it runs (open by default then),
 * or loaded from the stored transcript when the turn is history (closed by default then).
 */
@Component({
  selector: 'cc-subagent-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatProgressSpinnerModule, Icon],
  templateUrl: './subagent-card.html',
  styleUrl: './subagent-card.scss',
  host: { '[attr.data-status]': 'view().status', '[attr.data-call-id]': 'tool().callId' },
})
export class SubagentCard {
  readonly tool = input.required<ToolBlockState>();

  protected readonly i18n = inject(I18n);
  private readonly store = inject(ChatStore);
  private readonly api = inject(SubagentApi);

  /** the user's choice; null: open for a sub-agent followed live (also once it ended), closed for one of the history */
  private readonly opened = signal<boolean | null>(null);
  private readonly stored = signal<SubagentView | null>(null);
  protected readonly loading = signal(false);
  protected readonly loadError = signal<string | null>(null);

  private readonly live = computed(() => viewFromBlock(this.tool()));
  /** the live view while the block has one; the stored transcript once it is loaded for a block of the history */
  protected readonly view = computed(() => (this.tool().subagent ? this.live() : (this.stored() ?? this.live())));
  protected readonly expanded = computed(() => this.opened() ?? this.tool().subagent !== undefined);
  protected readonly statusLabel = computed(() => this.i18n.t(STATUS_LABELS[this.view().status]));
  protected readonly duration = computed(() => {
    const ms = this.tool().subagent?.durationMs ?? this.tool().durationMs;
    return ms === null || ms === undefined ? '' : formatDuration(ms);
  });

  protected toggle(): void {
    const open = !this.expanded();
    this.opened.set(open);
    if (open && !this.tool().subagent && this.stored() === null) void this.load();
  }

  protected summary(raw: string): string {
    return summarizeArguments(raw, 80);
  }

  protected preview(result: string | null): string {
    return (result ?? '').replace(/\s+/g, ' ').trim();
  }

  private async load(): Promise<void> {
    const chatId = this.store.activeChatId();
    if (!chatId) return;
    this.loading.set(true);
    this.loadError.set(null);
    try {
      this.stored.set(viewFromTranscript(await this.api.transcript(chatId, this.tool().callId)));
    } catch (err) {
      this.loadError.set(err instanceof Error && err.message ? err.message : this.i18n.t('subagent.loadFailed'));
    } finally {
      this.loading.set(false);
    }
  }
}
