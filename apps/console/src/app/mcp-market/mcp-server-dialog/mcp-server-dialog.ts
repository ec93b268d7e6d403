import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MCP_MAX_HEADERS, type McpServerRecord, type McpUserTransportType } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MAT_DIALOG_DATA, MatDialogModule, MatDialogRef } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatSelectModule } from '@angular/material/select';

import { I18n } from '../../core/i18n/i18n';
import { FieldError } from '../../shared/field-error';
import { Icon } from '../../shared/icon/icon';
import {
  KeyValueRows,
  type KeyValueNameChange,
  type KeyValueRow,
  type KeyValueValueChange,
} from '../../shared/key-value-rows/key-value-rows';
import {
  changeHeaderValue,
  draftFromRecord,
  hasErrors,
  newHeaderRow,
  renameHeader,
  validateDraft,
  type DraftField,
  type HeaderRow,
  type McpServerDraft,
  type ServerErrors,
} from '../mcp-server-form';

export interface McpServerDialogData {
  /** null: create */
  server: McpServerRecord | null;
  /** resolves null on success, else the API's errors */
  save(draft: McpServerDraft): Promise<ServerErrors | null>;
}

type TextField = Exclude<DraftField, 'type' | 'headers' | 'env'>;

/**
 * Create / edit form of a user MCP server (openspec console), validated like the server, with the API's messages
 * inline.
 */
@Component({
  selector: 'cc-mcp-server-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, MatFormFieldModule, MatInputModule, MatSelectModule, FieldError, Icon, KeyValueRows],
  templateUrl: './mcp-server-dialog.html',
  styleUrl: './mcp-server-dialog.scss',
})
export class McpServerDialog {
  private readonly data = inject<McpServerDialogData>(MAT_DIALOG_DATA);
  private readonly ref = inject<MatDialogRef<McpServerDialog, boolean>>(MatDialogRef);
  protected readonly i18n = inject(I18n);

  protected readonly draft = signal<McpServerDraft>(draftFromRecord(this.data.server));
  protected readonly submitted = signal(false);
  protected readonly saving = signal(false);
  protected readonly server = signal<ServerErrors>({ fields: {}, headers: {}, general: null });
  protected readonly maxHeaders = MCP_MAX_HEADERS;
  protected readonly editing = this.data.server !== null;
  private readonly clientErrors = computed(() => (this.submitted() ? validateDraft(this.draft()) : { fields: {}, headers: {} }));

  protected fieldError(field: DraftField): string | null {
    const fromServer = this.server().fields[field];
    if (fromServer) return fromServer;
    const key = this.clientErrors().fields[field];
    return key ? this.i18n.t(key) : null;
  }

  /** The message under a header or env row's name or value field (the server's message goes under the value). */
  protected readonly rowError = (row: KeyValueRow, part: 'name' | 'value'): string | null => {
    const fromServer = this.server().headers[row.id];
    if (fromServer) return part === 'value' ? fromServer : null;
    const key = this.clientErrors().headers[row.id]?.[part];
    return key ? this.i18n.t(key) : null;
  };

  protected readonly removeHeaderLabel = (name: string): string => this.i18n.t('mcp.form.removeHeader', { name });
  protected readonly removeEnvLabel = (name: string): string => this.i18n.t('mcp.form.removeEnv', { name });

  protected onInput(field: TextField, event: Event): void {
    const value = (event.target as HTMLInputElement).value;
    const key: Record<TextField, keyof McpServerDraft> = {
      name: 'name',
      displayName: 'displayName',
      url: 'url',
      description: 'description',
      command: 'command',
      args: 'args',
      cwd: 'cwd',
    };
    this.draft.update((draft) => ({ ...draft, [key[field]]: value }));
    this.clearServerField(field);
  }

  protected onType(type: McpUserTransportType): void {
    this.draft.update((draft) => ({ ...draft, type }));
    this.clearServerField('type');
  }

  protected addHeader(): void {
    if (this.draft().headers.length >= MCP_MAX_HEADERS) return;
    this.draft.update((draft) => ({ ...draft, headers: [...draft.headers, newHeaderRow()] }));
  }

  protected removeHeader(row: KeyValueRow): void {
    this.draft.update((draft) => ({ ...draft, headers: draft.headers.filter((h) => h.id !== row.id) }));
  }

  protected addEnv(): void {
    this.draft.update((draft) => ({ ...draft, env: [...draft.env, newHeaderRow()] }));
  }

  protected removeEnv(row: KeyValueRow): void {
    this.draft.update((draft) => ({ ...draft, env: draft.env.filter((h) => h.id !== row.id) }));
  }

  /** A header or env row was renamed (row ids are unique across both lists). */
  protected onRowName({ row, name }: KeyValueNameChange): void {
    this.updateRow(row.id, (current) => renameHeader(current, name));
  }

  protected onRowValue({ row, value }: KeyValueValueChange): void {
    this.updateRow(row.id, (current) => changeHeaderValue(current, value));
  }

  protected async submit(): Promise<void> {
    this.submitted.set(true);
    this.server.set({ fields: {}, headers: {}, general: null });
    if (hasErrors(validateDraft(this.draft()))) return;
    this.saving.set(true);
    try {
      const errors = await this.data.save(this.draft());
      if (errors === null) this.ref.close(true);
      else this.server.set(errors);
    } finally {
      this.saving.set(false);
    }
  }

  private updateRow(id: number, change: (row: HeaderRow) => HeaderRow): void {
    this.draft.update((draft) => ({
      ...draft,
      headers: draft.headers.map((row) => (row.id === id ? change(row) : row)),
      env: draft.env.map((row) => (row.id === id ? change(row) : row)),
    }));
    this.server.update((errors) => {
      if (errors.headers[id] === undefined) return errors;
      const headers = { ...errors.headers };
      delete headers[id];
      return { ...errors, headers };
    });
  }

  private clearServerField(field: DraftField): void {
    this.server.update((errors) => {
      if (errors.fields[field] === undefined) return errors;
      const fields = { ...errors.fields };
      delete fields[field];
      return { ...errors, fields };
    });
  }
}
