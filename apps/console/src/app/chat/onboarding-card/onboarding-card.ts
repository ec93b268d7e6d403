import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { RouterLink } from '@angular/router';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';

/** Shown in the chat view while no model connection is configured. */
@Component({
  selector: 'cc-onboarding-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, RouterLink, Icon],
  template: `
    <section class="cc-card" data-testid="onboarding">
      <div class="cc-icon"><cc-icon name="bolt" /></div>
      <div class="cc-text">
        <h2>{{ i18n.t('onboarding.title') }}</h2>
        <p>{{ i18n.t('onboarding.body') }}</p>
      </div>
      <a mat-flat-button routerLink="/settings/llm" data-testid="onboarding-action">
        <cc-icon name="settings" />
        {{ i18n.t('onboarding.action') }}
      </a>
    </section>
  `,
  styles: `
    .cc-card {
      display: flex;
      align-items: center;
      gap: 16px;
      padding: 18px 20px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 18px;
      background: var(--mat-sys-surface-container-low);
      box-shadow: var(--mat-sys-level1);
      text-align: left;
    }
    .cc-icon {
      display: inline-flex;
      padding: 10px;
      border-radius: 14px;
      background: var(--mat-sys-primary);
      color: var(--mat-sys-on-primary);
      --cc-icon-size: 22px;
    }
    .cc-text {
      flex: 1;
    }
    h2 {
      margin: 0 0 4px;
      font: var(--mat-sys-title-medium);
    }
    p {
      margin: 0;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-medium);
    }
    a {
      gap: 6px;
      flex: none;
      --cc-icon-size: 18px;
    }
    @media (max-width: 640px) {
      .cc-card {
        flex-direction: column;
        align-items: flex-start;
      }
    }
  `,
})
export class OnboardingCard {
  protected readonly i18n = inject(I18n);
}
