import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import type { McpServerRecord, McpServerToolsResponse } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MAT_DIALOG_DATA, MatDialogModule } from '@angular/material/dialog';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';

export interface McpToolsDialogData {
  server: McpServerRecord;
  load(): Promise<McpServerToolsResponse>;
}

/** The tools of one server: live (callable) or cached, each with its input schema. */
@Component({
  selector: 'cc-mcp-tools-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, MatProgressSpinnerModule],
  template: `
    <h2 mat-dialog-title>{{ i18n.t('mcp.toolsPanel.title', { name: data.server.display_name }) }}</h2>
    <mat-dialog-content>
      @if (loading()) {
        <div class="cc-loading"><mat-progress-spinner mode="indeterminate" diameter="28" /></div>
      } @else if (error(); as error) {
        <p class="cc-error" role="alert">{{ i18n.t('mcp.toolsPanel.loadFailed', { detail: error }) }}</p>
      } @else if (tools(); as result) {
        @if (result.source === 'none') {
          <p class="cc-note" data-testid="mcp-tools-none">{{ i18n.t('mcp.toolsPanel.none') }}</p>
        } @else {
          <p class="cc-note" [attr.data-source]="result.source" data-testid="mcp-tools-source">
            {{ i18n.t(result.source === 'live' ? 'mcp.toolsPanel.live' : 'mcp.toolsPanel.cache') }}
          </p>
          <ul class="cc-tools">
            @for (tool of result.tools; track tool.name) {
              <li data-testid="mcp-tool">
                <code class="cc-tool-name">{{ tool.name }}</code>
                @if (tool.original_name !== tool.name) {
                  <span class="cc-original">{{ tool.original_name }}</span>
                }
                <p>{{ tool.description || i18n.t('mcp.noDescription') }}</p>
                <details>
                  <summary>{{ i18n.t('mcp.toolsPanel.schema') }}</summary>
                  <pre>{{ schemaText(tool.input_schema) }}</pre>
                </details>
              </li>
            }
          </ul>
        }
      }
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" mat-dialog-close data-testid="mcp-tools-close">{{ i18n.t('mcp.toolsPanel.close') }}</button>
    </mat-dialog-actions>
  `,
  styles: `
    .cc-loading {
      display: flex;
      justify-content: center;
      padding: 24px;
    }
    .cc-note {
      margin: 0 0 12px;
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-error {
      color: var(--mat-sys-error);
    }
    .cc-tools {
      margin: 0;
      padding: 0;
      list-style: none;
      li {
        padding: 10px 0;
        border-top: 1px solid var(--mat-sys-outline-variant);
      }
      p {
        margin: 4px 0;
      }
    }
    .cc-tool-name {
      font-weight: 600;
    }
    .cc-original {
      margin-left: 8px;
      color: var(--mat-sys-on-surface-variant);
      font-size: 12px;
    }
    pre {
      max-height: 240px;
      overflow: auto;
      padding: 8px;
      border-radius: 8px;
      background: var(--mat-sys-surface-container-highest);
      font-size: 12px;
    }
  `,
})
export class McpToolsDialog {
  protected readonly data = inject<McpToolsDialogData>(MAT_DIALOG_DATA);
  protected readonly i18n = inject(I18n);
  protected readonly loading = signal(true);
  protected readonly error = signal<string | null>(null);
  protected readonly tools = signal<McpServerToolsResponse | null>(null);

  constructor() {
    void this.load();
  }

  protected schemaText(schema: Record<string, unknown>): string {
    return JSON.stringify(schema, null, 2);
  }

  private async load(): Promise<void> {
    try {
      this.tools.set(await this.data.load());
    } catch (error) {
      this.error.set(errorMessage(error));
    } finally {
      this.loading.set(false);
    }
  }
}
