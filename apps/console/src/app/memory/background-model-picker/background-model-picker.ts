import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatSelectModule, type MatSelectChange } from '@angular/material/select';
import type { LlmProvider } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { BackgroundModelStore } from './background-model-store';

/** Picks the model Dream uses for background memory work; saved at once in the LLM settings. */
@Component({
  selector: 'cc-background-model-picker',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatFormFieldModule, MatSelectModule, Icon],
  providers: [BackgroundModelStore],
  template: `
    <section class="cc-background" data-testid="background-model">
      <h2>{{ i18n.t('memory.dream.background') }}</h2>
      <p class="cc-hint">{{ i18n.t('memory.dream.backgroundHint') }}</p>
      <mat-form-field appearance="outline" class="cc-field">
        <mat-label>{{ i18n.t('memory.dream.background') }}</mat-label>
        <mat-select
          [value]="store.selected()"
          [disabled]="!store.configured() || store.action() !== 'idle'"
          (selectionChange)="onChange($event)"
          data-testid="background-model-select"
        >
          <mat-option value="">{{ i18n.t('memory.dream.backgroundNone') }}</mat-option>
          @for (option of store.options(); track option.key) {
            <mat-option [value]="option.key">{{ option.selection.model }} · {{ providerLabel(option.selection.provider) }}</mat-option>
          }
        </mat-select>
      </mat-form-field>
      @if (store.message(); as message) {
        <p class="cc-note" [class.cc-error]="message.kind === 'error'" role="status" data-testid="background-model-message">
          <cc-icon [name]="message.kind === 'error' ? 'error' : 'checkCircle'" />
          {{ message.text }}
        </p>
      }
    </section>
  `,
  styles: `
    .cc-background {
      margin-top: 20px;
      padding: 20px 24px 8px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 20px;
      background: var(--mat-sys-surface-container-low);
    }
    h2 {
      margin: 0;
      font: var(--mat-sys-title-medium);
    }
    .cc-hint {
      margin: 4px 0 16px;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-medium);
    }
    .cc-field {
      width: 100%;
    }
    .cc-note {
      display: flex;
      align-items: center;
      gap: 8px;
      margin: 0 0 12px;
      font: var(--mat-sys-body-small);
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-note.cc-error {
      color: var(--mat-sys-error);
    }
  `,
})
export class BackgroundModelPicker {
  protected readonly store = inject(BackgroundModelStore);
  protected readonly i18n = inject(I18n);

  constructor() {
    void this.store.load();
  }

  protected providerLabel(provider: LlmProvider): string {
    return this.i18n.t(`provider.${provider}`);
  }

  protected onChange(change: MatSelectChange<string>): void {
    void this.store.choose(change.value);
  }
}
