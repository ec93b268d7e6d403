import { ChangeDetectionStrategy, Component, input } from '@angular/core';

import { Icon } from '../icon/icon';
import type { IconName } from '../icon/icon-paths';

/** What an empty list shows instead: an icon badge, a heading and a hint. */
@Component({
  selector: 'cc-empty-state',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <section class="cc-empty">
      <div class="cc-badge"><cc-icon [name]="icon()" /></div>
      <h2>{{ heading() }}</h2>
      <p>{{ hint() }}</p>
    </section>
  `,
  styles: `
    :host {
      display: block;
    }
    .cc-empty {
      padding: 48px 16px;
      text-align: center;

      h2 {
        margin: 16px 0 4px;
        font: var(--mat-sys-title-large);
      }

      p {
        margin: 0;
        color: var(--mat-sys-on-surface-variant);
      }
    }
    .cc-badge {
      --cc-icon-size: 28px;
      display: inline-flex;
      padding: 14px;
      border-radius: 18px;
      background: var(--mat-sys-primary-container);
      color: var(--mat-sys-on-primary-container);
    }
  `,
})
export class EmptyState {
  readonly icon = input.required<IconName>();
  readonly heading = input.required<string>();
  readonly hint = input.required<string>();
}
