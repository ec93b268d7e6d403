import { ChangeDetectionStrategy, Component } from '@angular/core';

/** Placeholder row cards, pulsing, while a list loads. */
@Component({
  selector: 'cc-list-skeleton',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <ul class="cc-list" aria-busy="true">
      @for (row of rows; track row) {
        <li class="cc-skeleton"><span></span><span></span><span></span></li>
      }
    </ul>
  `,
  styles: `
    @use '../styles/list-page';

    :host {
      display: block;
    }
    @include list-page.list;
    .cc-skeleton {
      display: flex;
      flex-direction: column;
      gap: 10px;
      @include list-page.card;

      span {
        display: block;
        height: 12px;
        width: 40%;
        border-radius: 6px;
        background: var(--mat-sys-surface-container-highest);
        animation: cc-pulse 1.2s ease-in-out infinite;
      }

      span:nth-child(2) {
        width: 70%;
      }

      span:nth-child(3) {
        width: 25%;
      }
    }
    @keyframes cc-pulse {
      50% {
        opacity: 0.5;
      }
    }
  `,
})
export class ListSkeleton {
  protected readonly rows = [0, 1, 2];
}
