import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import type { McpImportResponse } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MAT_DIALOG_DATA, MatDialogModule } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';

import { ApiError } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { importSummary, parseImportText } from '../mcp-import';

export interface McpImportDialogData {
  submit(config: Record<string, unknown>): Promise<McpImportResponse>;
}

/** Paste or upload a Claude Desktop / Claude Code / VS Code configuration and import its servers (openspec mcp). */
@Component({
  selector: 'cc-mcp-import-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, MatFormFieldModule, MatInputModule],
  template: `
    <h2 mat-dialog-title>{{ i18n.t('mcp.import.title') }}</h2>
    <mat-dialog-content>
      <p class="cc-hint">{{ i18n.t('mcp.import.hint') }}</p>
      <mat-form-field appearance="outline" class="cc-json">
        <mat-label>{{ i18n.t('mcp.import.json') }}</mat-label>
        <textarea
          matInput
          rows="10"
          spellcheck="false"
          [value]="text()"
          (input)="text.set($any($event.target).value)"
          data-testid="mcp-import-json"
        ></textarea>
      </mat-form-field>
      <input type="file" accept="application/json,.json" (change)="upload($event)" data-testid="mcp-import-file" />
      @if (error(); as message) {
        <p class="cc-error" role="alert" data-testid="mcp-import-error">{{ message }}</p>
      }
      @if (lines().length > 0) {
        <ul class="cc-result" data-testid="mcp-import-result">
          @for (line of lines(); track $index) {
            <li>{{ line }}</li>
          }
        </ul>
      }
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" [mat-dialog-close]="lines().length > 0">{{ i18n.t('common.dismiss') }}</button>
      <button mat-flat-button type="button" (click)="submit()" [disabled]="busy()" data-testid="mcp-import-submit">
        {{ i18n.t('mcp.import.submit') }}
      </button>
    </mat-dialog-actions>
  `,
  styles: `
    .cc-json {
      width: 100%;
    }
    .cc-json textarea {
      font-family: monospace;
    }
  `,
})
export class McpImportDialog {
  private readonly data = inject<McpImportDialogData>(MAT_DIALOG_DATA);
  protected readonly i18n = inject(I18n);
  protected readonly text = signal('');
  protected readonly error = signal<string | null>(null);
  protected readonly lines = signal<string[]>([]);
  protected readonly busy = signal(false);

  protected async upload(event: Event): Promise<void> {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (file) this.text.set(await file.text());
  }

  protected async submit(): Promise<void> {
    this.error.set(null);
    const config = parseImportText(this.text());
    if (config === null) {
      this.error.set(this.i18n.t('mcp.import.invalidJson'));
      return;
    }
    this.busy.set(true);
    try {
      const result = await this.data.submit(config);
      this.lines.set(importSummary(result, (key, params) => this.i18n.t(key, params)));
    } catch (error) {
      this.error.set(error instanceof ApiError ? error.detail : String(error));
    } finally {
      this.busy.set(false);
    }
  }
}
