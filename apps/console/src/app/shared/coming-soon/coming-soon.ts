import { ChangeDetectionStrategy, Component, inject, input } from '@angular/core';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../icon/icon';
import type { IconName } from '../icon/icon-paths';

/** Placeholder page for features that are not built yet. */
@Component({
  selector: 'cc-coming-soon',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <section class="cc-coming-soon">
      <div class="cc-badge"><cc-icon [name]="icon()" /></div>
      <h1>{{ i18n.t(titleKey()) }}</h1>
      <p class="cc-tag">{{ i18n.t('market.comingSoon') }}</p>
      <p class="cc-body">{{ i18n.t(bodyKey()) }}</p>
    </section>
  `,
  styles: `
    :host {
      display: flex;
      flex: 1;
      align-items: center;
      justify-content: center;
      padding: 32px;
    }
    .cc-coming-soon {
      max-width: 460px;
      text-align: center;
    }
    .cc-badge {
      --cc-icon-size: 32px;
      display: inline-flex;
      padding: 16px;
      border-radius: 20px;
      background: var(--mat-sys-primary-container);
      color: var(--mat-sys-on-primary-container);
    }
    h1 {
      margin: 20px 0 4px;
      font: var(--mat-sys-headline-small);
    }
    .cc-tag {
      display: inline-block;
      margin: 8px 0 16px;
      padding: 2px 12px;
      border-radius: 999px;
      background: var(--mat-sys-secondary-container);
      color: var(--mat-sys-on-secondary-container);
      font: var(--mat-sys-label-large);
    }
    .cc-body {
      margin: 0;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-large);
    }
  `,
})
export class ComingSoon {
  readonly titleKey = input.required<MessageKey>();
  readonly bodyKey = input.required<MessageKey>();
  readonly icon = input.required<IconName>();
  protected readonly i18n = inject(I18n);
}
