import { ChangeDetectionStrategy, Component, DestroyRef, computed, inject, output, signal } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatMenuModule } from '@angular/material/menu';
import { MatSnackBar } from '@angular/material/snack-bar';
import { MatTooltipModule } from '@angular/material/tooltip';
import { NavigationEnd, Router, RouterLink, RouterLinkActive } from '@angular/router';
import { sessionChannelInfo } from '@cashcode/contracts';
import type { SessionChannelInfo, SessionExportFormat, SessionSearchResult, SessionSummary } from '@cashcode/contracts';
import { filter, map } from 'rxjs';

import { CHANNEL_NAMES } from '../../../channels/channel-rules';
import { ChatApi } from '../../../chat/chat-api';
import { ChatStore } from '../../../chat/chat-store';
import { chatUrl, isChatUrl } from '../../../chat/chat-url';
import { sessionExportFileName, sessionExportMimeType } from '../../../chat/session-export';
import { SESSION_SEARCH_DEBOUNCE_MS, sessionSearchQuery } from '../../../chat/session-search';
import { errorMessage } from '../../api/api-error';
import { Autofocus } from '../../../shared/autofocus';
import { confirmAction } from '../../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../../shared/icon/icon';
import { relativeTime } from '../../../shared/relative-time';
import { I18n } from '../../i18n/i18n';

/** Sidebar: new chat, the markets, session history (open, rename, delete) and settings. */
@Component({
  selector: 'cc-sidebar',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatMenuModule, MatTooltipModule, RouterLink, RouterLinkActive, Autofocus, Icon],
  templateUrl: './sidebar.html',
  styleUrl: './sidebar.scss',
})
export class Sidebar {
  /** emitted after any navigation (the shell closes the drawer on small screens) */
  readonly navigated = output<void>();

  protected readonly i18n = inject(I18n);
  protected readonly store = inject(ChatStore);
  private readonly api = inject(ChatApi);
  private readonly router = inject(Router);
  private readonly dialog = inject(MatDialog);
  private readonly snackBar = inject(MatSnackBar);

  private readonly now = signal(Date.now());
  protected readonly editingId = signal<string | null>(null);
  protected readonly historyOpen = signal(true);
  /** search results for the current query; null → the normal session list */
  protected readonly searchResults = signal<SessionSearchResult[] | null>(null);
  protected readonly searchFailed = signal<string | null>(null);
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  private searchSeq = 0;

  private readonly url = toSignal(
    this.router.events.pipe(
      filter((event) => event instanceof NavigationEnd),
      map((event) => event.urlAfterRedirects),
    ),
    { initialValue: this.router.url },
  );
  protected readonly onChatView = computed(() => isChatUrl(this.url()));

  constructor() {
    const timer = setInterval(() => this.now.set(Date.now()), 30_000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }

  /** openspec console "Requirement: Search chats": debounced; only the newest query's answer is shown. */
  protected onSearchInput(text: string): void {
    if (this.searchTimer) clearTimeout(this.searchTimer);
    const query = sessionSearchQuery(text);
    const seq = ++this.searchSeq;
    if (query === null) {
      this.searchResults.set(null);
      this.searchFailed.set(null);
      return;
    }
    this.searchTimer = setTimeout(() => {
      this.api.searchSessions(query).then(
        (response) => {
          if (seq !== this.searchSeq) return;
          this.searchFailed.set(null);
          this.searchResults.set(response.results);
        },
        (error: unknown) => {
          if (seq !== this.searchSeq) return;
          this.searchResults.set([]);
          this.searchFailed.set(errorMessage(error));
        },
      );
    }, SESSION_SEARCH_DEBOUNCE_MS);
  }

  protected openResult(result: SessionSearchResult): void {
    this.store.open(result.chat_id);
    void this.router.navigateByUrl(chatUrl(result.chat_id));
    this.navigated.emit();
  }

  protected title(session: SessionSummary): string {
    return session.title.trim() || this.i18n.t('session.untitled');
  }

  /** openspec console "Requirement: Channel chats in the chat list": the channel's icon and the sender's name. */
  protected channelOf(session: SessionSummary): SessionChannelInfo | null {
    return sessionChannelInfo(session.channel);
  }

  protected channelLabel(channel: SessionChannelInfo): string {
    return this.i18n.t('channels.sessionIcon', { channel: CHANNEL_NAMES[channel.kind], name: channel.display_name });
  }

  protected when(session: SessionSummary): string {
    return relativeTime(session.updated_at, this.now(), (key, params) => this.i18n.t(key, params), this.i18n.locale());
  }

  protected newChat(): void {
    this.store.newChat();
    void this.router.navigateByUrl('/');
    this.navigated.emit();
  }

  protected open(session: SessionSummary): void {
    if (this.editingId() === session.chat_id) return;
    this.store.open(session.chat_id);
    void this.router.navigateByUrl(chatUrl(session.chat_id));
    this.navigated.emit();
  }

  protected startRename(session: SessionSummary): void {
    this.editingId.set(session.chat_id);
  }

  protected async commitRename(session: SessionSummary, value: string): Promise<void> {
    if (this.editingId() !== session.chat_id) return;
    this.editingId.set(null);
    const title = value.trim();
    if (title === '' || title === session.title) return;
    const error = await this.store.rename(session.chat_id, title);
    if (error) this.snackBar.open(this.i18n.t('session.renameFailed', { detail: error }), this.i18n.t('common.dismiss'), { duration: 6000 });
  }

  protected cancelRename(): void {
    this.editingId.set(null);
  }

  protected onRenameKey(event: KeyboardEvent, session: SessionSummary, input: HTMLInputElement): void {
    if (event.key === 'Enter' && !event.isComposing) {
      event.preventDefault();
      void this.commitRename(session, input.value);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      this.cancelRename();
    }
  }

  /** Downloads the chat as Markdown or JSON (openspec console "Requirement: Export a chat"). */
  protected async exportSession(session: SessionSummary, format: SessionExportFormat): Promise<void> {
    let body: string;
    try {
      body = await this.api.exportSession(session.chat_id, format);
    } catch (error) {
      this.snackBar.open(this.i18n.t('session.exportFailed', { detail: errorMessage(error) }), this.i18n.t('common.dismiss'), {
        duration: 6000,
      });
      return;
    }
    const url = URL.createObjectURL(new Blob([body], { type: sessionExportMimeType(format) }));
    const link = document.createElement('a');
    link.href = url;
    link.download = sessionExportFileName(session.chat_id, format);
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  protected async remove(session: SessionSummary): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('session.deleteTitle'),
      body: this.i18n.t('session.deleteBody', { title: this.title(session) }),
      confirm: this.i18n.t('common.delete'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (!confirmed) return;
    const error = await this.store.remove(session.chat_id);
    if (error) this.snackBar.open(this.i18n.t('session.deleteFailed', { detail: error }), this.i18n.t('common.dismiss'), { duration: 6000 });
  }
}
