import { ChangeDetectionStrategy, Component, inject, input, output } from '@angular/core';
import { MatSelectModule, type MatSelectChange } from '@angular/material/select';
import { TOOL_POLICIES, type ToolPolicy } from '@cashcode/contracts';

import type { PolicyChoice } from '../tool-policies-view';
import { I18n, type MessageKey } from '../../core/i18n/i18n';

/** An allow / ask / deny select; with `inherited` it also offers "Default (…)" (no policy of its own). */
@Component({
  selector: 'cc-policy-select',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatSelectModule],
  template: `
    <mat-select
      class="cc-policy"
      [value]="value()"
      [disabled]="disabled()"
      [attr.aria-label]="label()"
      [attr.data-policy]="value()"
      panelWidth=""
      (selectionChange)="onChange($event)"
    >
      @if (inherited(); as policy) {
        <mat-option value="inherit">{{ i18n.t('toolPolicies.inherit', { policy: i18n.t(policyKey(policy)) }) }}</mat-option>
      }
      @for (policy of policies; track policy) {
        <mat-option [value]="policy" [attr.data-policy]="policy">{{ i18n.t(policyKey(policy)) }}</mat-option>
      }
    </mat-select>
  `,
  styles: `
    :host {
      display: inline-block;
      flex: none;
      width: 180px;
    }
    .cc-policy {
      box-sizing: border-box;
      width: 100%;
      padding: 6px 10px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 8px;
      background: var(--mat-sys-surface);
      font: var(--mat-sys-body-medium);
    }
    .cc-policy:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 1px;
    }
    .cc-policy[data-policy='deny'] {
      color: var(--mat-sys-error);
    }
  `,
})
export class PolicySelect {
  readonly value = input.required<PolicyChoice>();
  readonly label = input.required<string>();
  readonly inherited = input<ToolPolicy | null>(null);
  readonly disabled = input(false);
  readonly changed = output<PolicyChoice>();

  protected readonly i18n = inject(I18n);
  protected readonly policies = TOOL_POLICIES;

  protected policyKey(policy: ToolPolicy): MessageKey {
    return `toolPolicies.policy.${policy}`;
  }

  protected onChange(event: MatSelectChange): void {
    if (event.value !== this.value()) this.changed.emit(event.value as PolicyChoice);
  }
}
