import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';

import { SignIn } from '../../api/sign-in';
import { I18n } from '../../i18n/i18n';

/**
 * Shown over the console while this browser is not signed in (a call answered 401): how to sign in with the link the
 * server printed at start, and a field to paste the API token instead.
 */
@Component({
  selector: 'cc-sign-in-screen',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatFormFieldModule, MatInputModule],
  template: `
    <section class="cc-sign-in" role="alertdialog" aria-modal="true" aria-labelledby="cc-sign-in-title" data-testid="sign-in-screen">
      <div class="cc-sign-in-card">
        <h1 id="cc-sign-in-title">{{ i18n.t('signIn.title') }}</h1>
        <p>{{ i18n.t('signIn.link') }}</p>
        <p class="cc-sign-in-example"><code>http://127.0.0.1:8000/api/auth/login?code=…</code></p>
        <form (submit)="$event.preventDefault(); submit()">
          <mat-form-field appearance="outline" class="cc-sign-in-field">
            <mat-label>{{ i18n.t('signIn.tokenLabel') }}</mat-label>
            <input
              matInput
              type="password"
              name="token"
              autocomplete="off"
              [value]="token()"
              (input)="token.set($any($event.target).value)"
              data-testid="sign-in-token"
            />
            <mat-hint>{{ i18n.t('signIn.tokenHint') }}</mat-hint>
          </mat-form-field>
          @if (refused()) {
            <p class="cc-sign-in-error" role="alert" data-testid="sign-in-error">{{ i18n.t('signIn.tokenRefused') }}</p>
          }
          <button mat-flat-button type="submit" [disabled]="busy() || token().trim() === ''" data-testid="sign-in-submit">
            {{ i18n.t('signIn.submit') }}
          </button>
        </form>
      </div>
    </section>
  `,
  styles: `
    .cc-sign-in {
      position: fixed;
      inset: 0;
      z-index: 1000;
      display: flex;
      align-items: center;
      justify-content: center;
      padding: 1rem;
      background: var(--mat-sys-surface);
      color: var(--mat-sys-on-surface);
    }
    .cc-sign-in-card {
      max-width: 36rem;
      width: 100%;
    }
    .cc-sign-in-card h1 {
      font: var(--mat-sys-headline-small);
      margin: 0 0 1rem;
    }
    .cc-sign-in-example code {
      overflow-wrap: anywhere;
    }
    .cc-sign-in-field {
      width: 100%;
      margin-top: 1rem;
    }
    .cc-sign-in-error {
      color: var(--mat-sys-error);
    }
  `,
})
export class SignInScreen {
  protected readonly i18n = inject(I18n);
  private readonly signIn = inject(SignIn);
  protected readonly token = signal('');
  protected readonly busy = signal(false);
  protected readonly refused = signal(false);

  protected async submit(): Promise<void> {
    const token = this.token().trim();
    if (token === '' || this.busy()) return;
    this.busy.set(true);
    this.refused.set(false);
    const accepted = await this.signIn.useToken(token);
    this.busy.set(false);
    this.refused.set(!accepted);
  }
}
