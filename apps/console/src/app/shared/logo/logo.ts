import { ChangeDetectionStrategy, Component } from '@angular/core';

/** The CashCode mark: a rounded tile with a code chevron and a coin slot. */
@Component({
  selector: 'cc-logo',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <svg viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <defs>
        <linearGradient id="cc-logo-gradient" x1="0" y1="0" x2="1" y2="1">
          <stop offset="0" stop-color="#1fb889" />
          <stop offset="1" stop-color="#0e7c66" />
        </linearGradient>
      </defs>
      <rect width="32" height="32" rx="9" fill="url(#cc-logo-gradient)" />
      <path d="M13.5 10.5 8 16l5.5 5.5" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round" />
      <circle cx="20.5" cy="16" r="4.2" fill="none" stroke="#fff" stroke-width="2.4" />
      <path d="M20.5 13.6v4.8" stroke="#fff" stroke-width="1.6" stroke-linecap="round" />
    </svg>
  `,
  styles: `
    :host {
      display: inline-flex;
      width: var(--cc-logo-size, 28px);
      height: var(--cc-logo-size, 28px);
      flex: none;
    }
    svg {
      width: 100%;
      height: 100%;
    }
  `,
})
export class Logo {}
