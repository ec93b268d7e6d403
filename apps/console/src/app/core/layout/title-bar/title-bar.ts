import { ChangeDetectionStrategy, Component, computed, inject, input, output } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatMenuModule } from '@angular/material/menu';
import { MatTooltipModule } from '@angular/material/tooltip';

import { ChatStore } from '../../../chat/chat-store';
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

/**
 * Top bar: brand, the server connection state, a "Model unreachable" pill when a ready provider's models could not
 * be listed, language and theme switches (and the drawer button on small screens).
 */
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
  private readonly store = inject(ChatStore);

  protected readonly languages = LANGUAGES;
  protected readonly state = this.socket.state;
  protected readonly stateLabel = computed(() => this.i18n.t(CONNECTION_LABELS[this.state()]));
  /** the providers' errors of the last model listing (`GET /api/llm/models`), one line each; empty when all answered */
  protected readonly modelProblem = computed(() =>
    this.store
      .providerErrors()
      .map(({ provider, error }) => `${this.i18n.t(provider === 'ollama' ? 'provider.ollama' : provider === 'anthropic' ? 'provider.anthropic' : 'provider.openai_compatible')}: ${error}`)
      .join('\n'),
  );
}
