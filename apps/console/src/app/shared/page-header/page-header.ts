import { ChangeDetectionStrategy, Component, input, output } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatTooltipModule } from '@angular/material/tooltip';

import { Icon } from '../icon/icon';

/**
 * A page's heading and subtitle, with the page's actions at the end of the line: a refresh icon button when
 * `refreshLabel` is set (emits `refresh`), then the projected content.
 */
@Component({
  selector: 'cc-page-header',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatTooltipModule, Icon],
  template: `
    <header class="cc-header">
      <div>
        <h1>{{ heading() }}</h1>
        <p class="cc-subtitle">{{ subtitle() }}</p>
      </div>
      <div class="cc-header-actions">
        @if (refreshLabel(); as label) {
          <button
            mat-icon-button
            type="button"
            (click)="refresh.emit()"
            [attr.aria-label]="label"
            [matTooltip]="label"
            [attr.data-testid]="refreshTestId()"
          >
            <cc-icon name="refresh" />
          </button>
        }
        <ng-content />
      </div>
    </header>
  `,
  styles: `
    @use '../styles/list-page';

    :host {
      display: block;
    }
    .cc-header {
      display: flex;
      align-items: flex-start;
      justify-content: space-between;
      gap: 16px;
      margin-bottom: 20px;

      h1 {
        margin: 0;
        font: var(--mat-sys-headline-small);
      }
    }
    .cc-subtitle {
      @include list-page.subtitle;
    }
    .cc-header-actions {
      display: flex;
      align-items: center;
      gap: 8px;
    }
  `,
})
export class PageHeader {
  readonly heading = input.required<string>();
  readonly subtitle = input.required<string>();
  /** shows the refresh button, labelled (aria-label and tooltip) with this text */
  readonly refreshLabel = input<string>();
  readonly refreshTestId = input<string>();
  readonly refresh = output<void>();
}
