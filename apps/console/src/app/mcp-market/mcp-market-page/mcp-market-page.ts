import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import type { McpServerRecord } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatMenuModule } from '@angular/material/menu';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { firstValueFrom } from 'rxjs';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Banner } from '../../shared/banner/banner';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { EmptyState } from '../../shared/empty-state/empty-state';
import { Icon } from '../../shared/icon/icon';
import { ListSkeleton } from '../../shared/list-skeleton/list-skeleton';
import { PageHeader } from '../../shared/page-header/page-header';
import { ToolPoliciesApi } from '../../settings/tool-policies-api';
import { McpMarketStore } from '../mcp-market-store';
import { McpApi } from '../mcp-api';
import { McpImportDialog, type McpImportDialogData } from '../mcp-import-dialog/mcp-import-dialog';
import { McpServerDialog, type McpServerDialogData } from '../mcp-server-dialog/mcp-server-dialog';
import { McpToolsDialog, type McpToolsDialogData } from '../mcp-tools-dialog/mcp-tools-dialog';

/**
 * MCP Market (openspec console): servers with status and tools, connect/disconnect, create/edit/delete user servers.
 */
@Component({
  selector: 'cc-mcp-market-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatMenuModule, MatProgressSpinnerModule, Banner, EmptyState, Icon, ListSkeleton, PageHeader],
  providers: [McpMarketStore],
  templateUrl: './mcp-market-page.html',
  styleUrl: './mcp-market-page.scss',
})
export class McpMarketPage {
  protected readonly store = inject(McpMarketStore);
  protected readonly i18n = inject(I18n);
  private readonly dialog = inject(MatDialog);
  private readonly toolPolicies = inject(ToolPoliciesApi);
  private readonly api = inject(McpApi);

  constructor() {
    void this.store.load();
  }

  protected statusKey(server: McpServerRecord): MessageKey {
    return `mcp.status.${server.status}`;
  }

  /** The last action's error on this row, else the server's status error. */
  protected rowError(server: McpServerRecord): string | null {
    const actionError: string | undefined = this.store.rowErrors()[server.name];
    return actionError ?? server.status_error;
  }

  protected lifecycleLabel(server: McpServerRecord): string {
    if (this.store.pending()?.name === server.name) return this.i18n.t('mcp.working');
    if (server.connected) return this.i18n.t('mcp.disconnect');
    return this.i18n.t(server.status === 'error' ? 'mcp.retryConnect' : 'mcp.connect');
  }

  protected openCreate(): void {
    void this.openForm(null);
  }

  protected async openImport(): Promise<void> {
    const ref = this.dialog.open<McpImportDialog, McpImportDialogData, boolean>(McpImportDialog, {
      data: { submit: (config) => this.api.importServers(config) },
      width: '720px',
      maxWidth: '96vw',
      autoFocus: 'first-tabbable',
      restoreFocus: true,
    });
    await firstValueFrom(ref.afterClosed());
    await this.store.load();
  }

  protected openEdit(server: McpServerRecord): void {
    void this.openForm(server);
  }

  protected openTools(server: McpServerRecord): void {
    this.dialog.open<McpToolsDialog, McpToolsDialogData>(McpToolsDialog, {
      data: {
        server,
        load: () => this.store.tools(server.name),
        policies: () => this.toolPolicies.get(),
        resources: () => this.store.resources(server.name),
      },
      width: '720px',
      maxWidth: '96vw',
      autoFocus: 'dialog',
    });
  }

  protected async confirmDelete(server: McpServerRecord): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('mcp.deleteTitle', { name: server.display_name }),
      body: this.i18n.t('mcp.deleteBody'),
      confirm: this.i18n.t('common.delete'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.remove(server.name);
  }

  private async openForm(server: McpServerRecord | null): Promise<void> {
    const ref = this.dialog.open<McpServerDialog, McpServerDialogData, boolean>(McpServerDialog, {
      data: { server, save: (draft) => this.store.save(draft) },
      width: '640px',
      maxWidth: '96vw',
      autoFocus: 'first-tabbable',
      restoreFocus: true,
    });
    await firstValueFrom(ref.afterClosed());
  }
}
