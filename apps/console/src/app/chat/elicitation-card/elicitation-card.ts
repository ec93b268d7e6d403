import { ChangeDetectionStrategy, Component, computed, inject, input, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import type { ElicitationAction } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { ChatStore } from '../chat-store';
import { elicitationContent, type ElicitationCardState, type ElicitationField } from '../tool-live-state';

/**
 * An MCP server's request for input during a tool call, as a form card like an approval card: the fields of the
 * requested schema, then Submit / Decline / Cancel (openspec console "Requirement: Tool progress and elicitation
 * cards"). The server validates the answer again; a refused answer reopens the form.
 */
@Component({
  selector: 'cc-elicitation-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, Icon],
  templateUrl: './elicitation-card.html',
  styleUrl: './elicitation-card.scss',
  host: { '[attr.data-status]': 'card().status', 'data-testid': 'elicitation-card' },
})
export class ElicitationCard {
  readonly card = input.required<ElicitationCardState>();

  protected readonly i18n = inject(I18n);
  private readonly store = inject(ChatStore);
  /** the raw values typed or chosen, by field name (defaults until changed) */
  private readonly values = signal<Record<string, unknown>>({});
  protected readonly problem = signal<string | null>(null);
  protected readonly open = computed(() => this.card().status === 'open');

  protected value(field: ElicitationField): unknown {
    const values = this.values();
    return field.name in values ? values[field.name] : field.default;
  }

  protected text(field: ElicitationField): string {
    const value = this.value(field);
    return value === undefined ? '' : String(value);
  }

  protected checked(field: ElicitationField, option?: string): boolean {
    const value = this.value(field);
    if (option === undefined) return value === true;
    return Array.isArray(value) && value.includes(option);
  }

  protected set(field: ElicitationField, value: unknown): void {
    this.values.update((values) => ({ ...values, [field.name]: value }));
  }

  protected toggle(field: ElicitationField, option: string, on: boolean): void {
    const current = this.value(field);
    const list = Array.isArray(current) ? (current as string[]).filter((v) => v !== option) : [];
    this.set(field, on ? [...list, option] : list);
  }

  protected inputValue(event: Event): string {
    return (event.target as HTMLInputElement | HTMLSelectElement).value;
  }

  protected inputChecked(event: Event): boolean {
    return (event.target as HTMLInputElement).checked;
  }

  protected answer(action: ElicitationAction): void {
    this.problem.set(null);
    if (action !== 'accept') {
      if (!this.store.answerElicitation(this.card().id, action)) this.problem.set(this.i18n.t('elicitation.notSent'));
      return;
    }
    const raw: Record<string, unknown> = {};
    for (const field of this.card().fields) raw[field.name] = this.value(field);
    const content = elicitationContent(this.card().fields, raw);
    if (!content.ok) {
      this.problem.set(this.i18n.t('elicitation.missing', { field: content.missing }));
      return;
    }
    if (!this.store.answerElicitation(this.card().id, 'accept', content.content)) this.problem.set(this.i18n.t('elicitation.notSent'));
  }

  protected readonly outcome = computed(() => {
    switch (this.card().status) {
      case 'sent':
        return this.i18n.t('elicitation.sent');
      case 'accept':
        return this.i18n.t('elicitation.accepted');
      case 'decline':
        return this.i18n.t('elicitation.declined');
      case 'cancel':
        return this.i18n.t('elicitation.cancelled');
      default:
        return '';
    }
  });
}
