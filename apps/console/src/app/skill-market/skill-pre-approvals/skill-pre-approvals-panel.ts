import { ChangeDetectionStrategy, Component, inject, input, output, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import type { SkillPreApprovals } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { SkillsApi } from '../skills-api';
import { preApprovalItemText } from './pre-approvals-view';

/**
 * What a Skill's allowed-tools would pre-approve and whether the owner allowed it (openspec console "Requirement:
 * Skill pre-approvals"): "waiting for your approval" with Approve, or "allowed by you" with Revoke. A grant names the
 * content hash shown, so the server refuses it (409) when the Skill changed meanwhile.
 */
@Component({
  selector: 'cc-skill-pre-approvals',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule],
  template: `
    @let pre = preApprovals();
    <section class="cc-pre" [class.cc-waiting]="!pre.granted" [attr.data-granted]="pre.granted" data-testid="skill-pre-approvals">
      <p class="cc-state" data-testid="skill-pre-approvals-state">
        {{ i18n.t(pre.granted ? 'skills.pre.granted' : 'skills.pre.waiting') }}
      </p>
      <p class="cc-intro">{{ i18n.t('skills.pre.intro') }}</p>
      <ul class="cc-items">
        @for (item of pre.summary; track $index) {
          <li [class.cc-broad]="item.broad" data-testid="skill-pre-approval-item">{{ text(item) }}</li>
        }
      </ul>
      @if (pre.broad) {
        <p class="cc-warning" role="note" data-testid="skill-pre-approvals-broad">{{ i18n.t('skills.pre.broadWarning') }}</p>
      }
      @if (!pre.granted) {
        <p class="cc-hint">{{ i18n.t('skills.pre.changedHint') }}</p>
      }
      @if (error(); as error) {
        <p class="cc-error" role="alert">{{ error }}</p>
      }
      <div class="cc-buttons">
        @if (pre.granted) {
          <button mat-stroked-button type="button" [disabled]="busy()" (click)="revoke()" data-testid="skill-pre-approvals-revoke">
            {{ i18n.t('skills.pre.revoke') }}
          </button>
        } @else {
          <button mat-flat-button type="button" [disabled]="busy()" (click)="approve()" data-testid="skill-pre-approvals-approve">
            {{ i18n.t('skills.pre.approve') }}
          </button>
        }
      </div>
    </section>
  `,
  styles: `
    .cc-pre {
      display: flex;
      flex-direction: column;
      gap: 4px;
      margin-top: 8px;
      padding: 8px 12px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 12px;
      font: var(--mat-sys-body-small);
    }
    .cc-pre.cc-waiting {
      border-color: var(--mat-sys-tertiary);
    }
    .cc-state {
      margin: 0;
      font-weight: 600;
    }
    .cc-intro,
    .cc-hint {
      margin: 0;
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-items {
      margin: 0;
      padding-left: 20px;
      overflow-wrap: anywhere;
    }
    .cc-broad,
    .cc-warning,
    .cc-error {
      color: var(--mat-sys-error);
    }
    .cc-warning,
    .cc-error {
      margin: 0;
    }
    .cc-buttons {
      display: flex;
      justify-content: flex-end;
    }
  `,
})
export class SkillPreApprovalsPanel {
  private readonly api = inject(SkillsApi);
  protected readonly i18n = inject(I18n);

  readonly name = input.required<string>();
  readonly preApprovals = input.required<SkillPreApprovals>();
  /** the grant changed (the list should be reloaded) */
  readonly changed = output<void>();

  protected readonly busy = signal(false);
  protected readonly error = signal<string | null>(null);

  protected text(item: SkillPreApprovals['summary'][number]): string {
    const { key, params } = preApprovalItemText(item);
    return this.i18n.t(key, params);
  }

  protected approve(): Promise<void> {
    return this.run(() => this.api.grantPreApprovals(this.name(), this.preApprovals().hash));
  }

  protected revoke(): Promise<void> {
    return this.run(() => this.api.revokePreApprovals(this.name()));
  }

  private async run(action: () => Promise<unknown>): Promise<void> {
    this.busy.set(true);
    this.error.set(null);
    try {
      await action();
      this.changed.emit();
    } catch (error) {
      // a 409 means the Skill changed since it was shown: the message says so; Refresh shows what it asks for now
      this.error.set(this.i18n.t('skills.pre.failed', { detail: errorMessage(error) }));
    } finally {
      this.busy.set(false);
    }
  }
}
