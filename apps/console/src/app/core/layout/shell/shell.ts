import { BreakpointObserver } from '@angular/cdk/layout';
import { ChangeDetectionStrategy, Component, type ElementRef, inject, viewChild } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { MatButtonModule } from '@angular/material/button';
import { MatSidenavModule } from '@angular/material/sidenav';
import { RouterOutlet } from '@angular/router';
import { map } from 'rxjs';

import { AutomationNotices } from '../../../automations/automation-notices';
import { ChatStore } from '../../../chat/chat-store';
import { Icon } from '../../../shared/icon/icon';
import { SignIn } from '../../api/sign-in';
import { I18n } from '../../i18n/i18n';
import { SignInScreen } from '../sign-in/sign-in-screen';
import { Sidebar } from '../sidebar/sidebar';
import { TitleBar } from '../title-bar/title-bar';

/** App layout: title bar on top, sidebar (a drawer on small screens) and the routed view. */
@Component({
  selector: 'cc-shell',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatSidenavModule, MatButtonModule, RouterOutlet, TitleBar, Sidebar, Icon, SignInScreen],
  templateUrl: './shell.html',
  styleUrl: './shell.scss',
})
export class Shell {
  protected readonly i18n = inject(I18n);
  protected readonly store = inject(ChatStore);
  /** the sign-in screen covers the console while this browser is not signed in */
  protected readonly signIn = inject(SignIn);
  protected readonly compact = toSignal(
    inject(BreakpointObserver)
      .observe('(max-width: 840px)')
      .pipe(map((state) => state.matches)),
    { initialValue: false },
  );

  private readonly main = viewChild.required<ElementRef<HTMLElement>>('main');

  constructor() {
    this.store.init();
    inject(AutomationNotices).start();
  }

  /** The skip link moves keyboard focus to the main landmark (not only the scroll position) and keeps the URL. */
  protected skipToMain(event: Event): void {
    event.preventDefault();
    this.main().nativeElement.focus();
  }
}
