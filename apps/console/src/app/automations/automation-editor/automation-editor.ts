import { ChangeDetectionStrategy, Component, computed, inject } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatCheckboxModule } from '@angular/material/checkbox';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatSlideToggleModule } from '@angular/material/slide-toggle';
import type { AutomationScheduleKind } from '@cashcode/contracts';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { FieldError } from '../../shared/field-error';
import { Icon } from '../../shared/icon/icon';
import { modelKey, type AutomationDraft, type DraftField, type IntervalUnit } from '../automation-form';
import { formatDueTime, timeZoneChoices } from '../automation-time';
import { AutomationsStore } from '../automations-store';

/**
 * The automation editor: name, prompt, schedule (cron, interval or once, in a time zone) with the server's live
 * description and next five due times, model, tools, approvals, budget, maximum run time, chat mode and missed-run
 * policy, and where runs are delivered (an approved Telegram sender). Errors of a refused save appear at their fields.
 */
@Component({
  selector: 'cc-automation-editor',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatCheckboxModule, MatFormFieldModule, MatInputModule, MatSlideToggleModule, FieldError, Icon],
  templateUrl: './automation-editor.html',
  styleUrl: './automation-editor.scss',
})
export class AutomationEditor {
  protected readonly store = inject(AutomationsStore);
  protected readonly i18n = inject(I18n);

  protected readonly draft = computed(() => this.store.editor()?.draft ?? null);
  protected readonly isNew = computed(() => this.store.editor()?.id === null);
  protected readonly zones = computed(() => timeZoneChoices(this.draft()?.timezone ?? ''));
  protected readonly kinds: readonly AutomationScheduleKind[] = ['cron', 'interval', 'once'];
  protected readonly units: readonly IntervalUnit[] = ['minutes', 'hours', 'days'];
  /** the models offered: the listed ones, and the draft's own when it is not listed (kept as it was) */
  protected readonly modelChoices = computed(() => {
    const keys = this.store.models().map((model) => modelKey({ provider: model.provider, model: model.id }));
    const current = this.draft()?.model ?? '';
    return current !== '' && !keys.includes(current) ? [current, ...keys] : keys;
  });
  /** the tools offered: the known ones, and any the draft names that are gone (so they can be removed) */
  protected readonly toolChoices = computed(() => [...new Set([...this.store.tools(), ...(this.draft()?.tools ?? [])])].sort());
  /** where a run can be delivered: the approved Telegram senders, and the draft's own target when it is not one */
  protected readonly deliveryChoices = computed(() => {
    const choices = this.store.senders().map((sender) => ({
      id: sender.sender_id,
      label: this.i18n.t(sender.kind === 'group' ? 'automations.delivery.group' : 'automations.delivery.user', { name: sender.display_name }),
    }));
    const current = this.draft()?.delivery?.channel?.chat_id;
    if (current !== undefined && !choices.some((choice) => choice.id === current)) {
      choices.unshift({ id: current, label: this.i18n.t('automations.delivery.unknown', { id: current }) });
    }
    return choices;
  });
  protected readonly nextRuns = computed(() => {
    const preview = this.store.preview();
    const draft = this.draft();
    if (!preview || !draft) return [];
    const zone = draft.scheduleKind === 'interval' ? undefined : draft.timezone;
    return preview.next.map((iso) => formatDueTime(iso, this.i18n.locale(), zone));
  });

  /** The message shown at a field (client check or server text), or null. */
  protected error(field: DraftField): string | null {
    const message = this.store.fieldErrors()[field];
    if (!message) return null;
    return message.text ?? this.i18n.t(message.key as MessageKey);
  }

  /** The schedule field's message: a refused save's, else the preview's. */
  protected scheduleError(): string | null {
    return this.error('schedule') ?? this.store.previewError();
  }

  protected set<K extends keyof AutomationDraft>(key: K, value: AutomationDraft[K]): void {
    this.store.edit({ [key]: value } as Partial<AutomationDraft>);
  }

  protected text(event: Event): string {
    return (event.target as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value;
  }

  protected deliverTo(chatId: string): void {
    this.set('delivery', chatId === '' ? null : { channel: { kind: 'telegram', chat_id: chatId } });
  }

  protected toggleTool(name: string, checked: boolean): void {
    const current = this.draft()?.tools ?? [];
    this.set('tools', checked ? [...new Set([...current, name])] : current.filter((tool) => tool !== name));
  }

  protected restrictTools(restrict: boolean): void {
    this.set('tools', restrict ? [] : null);
  }

  protected kindKey(kind: AutomationScheduleKind): MessageKey {
    return `automations.kind.${kind}`;
  }

  protected unitKey(unit: IntervalUnit): MessageKey {
    return `automations.unit.${unit}`;
  }
}
