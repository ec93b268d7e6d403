import { ChangeDetectionStrategy, Component, computed, inject, input, output } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatMenuModule } from '@angular/material/menu';
import { MatTooltipModule } from '@angular/material/tooltip';

import { Icon } from '../../../shared/icon/icon';
import { Logo } from '../../../shared/logo/logo';
import { I18n, LANGUAGES, type MessageKey } from '../../i18n/i18n';
import { ChatSocket, type ConnectionState } from '../../socket/chat-socket';
import { Theme } from '../../theme/theme';

const CONNECTION_LABELS: Record<ConnectionState, MessageKey> = {
  connected: 'connection.connected',
  connecting: 'connection.connecting',
  disconnected: 'connection.disconnected',
  error: 'connection.error',
};

/** Top bar: brand, connection state, language and theme switches (and the drawer button on small screens). */
@Component({
  selector: 'cc-title-bar',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatMenuModule, MatTooltipModule, Icon, Logo],
  templateUrl: './title-bar.html',
  styleUrl: './title-bar.scss',
})
export class TitleBar {
  readonly showMenuButton = input(false);
  readonly toggleSidebar = output<void>();

  protected readonly i18n = inject(I18n);
  protected readonly theme = inject(Theme);
  private readonly socket = inject(ChatSocket);

  protected readonly languages = LANGUAGES;
  protected readonly state = this.socket.state;
  protected readonly stateLabel = computed(() => this.i18n.t(CONNECTION_LABELS[this.state()]));
}
