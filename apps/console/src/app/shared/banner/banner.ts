import { ChangeDetectionStrategy, Component, input } from '@angular/core';

import { Icon } from '../icon/icon';

export type BannerTone = 'error' | 'info';

/** A full-width message above a list: an error (role alert) or a notice (role status); actions are projected. */
@Component({
  selector: 'cc-banner',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <div class="cc-banner" [attr.data-tone]="tone()" [attr.role]="tone() === 'error' ? 'alert' : 'status'">
      <cc-icon [name]="tone() === 'error' ? 'error' : 'warning'" />
      <span>{{ message() }}</span>
      <ng-content />
    </div>
  `,
  styles: `
    :host {
      display: block;
    }
    .cc-banner {
      display: flex;
      align-items: center;
      gap: 12px;
      margin-bottom: 16px;
      padding: 10px 14px;
      border-radius: 12px;
      background: var(--mat-sys-error-container);
      color: var(--mat-sys-on-error-container);

      span {
        flex: 1;
      }

      &[data-tone='info'] {
        background: var(--mat-sys-tertiary-container);
        color: var(--mat-sys-on-tertiary-container);
      }
    }
  `,
})
export class Banner {
  readonly message = input.required<string>();
  readonly tone = input<BannerTone>('error');
}
