import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatCheckboxModule, type MatCheckboxChange } from '@angular/material/checkbox';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { BackupApi } from '../backup-api';

/**
 * Settings > Data (openspec console "Requirement: Download a backup"): one button downloads the backup archive of
 * everything the server owns; secrets only when the box is ticked, and then a warning says the file holds them.
 */
@Component({
  selector: 'cc-data-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatCheckboxModule, MatProgressSpinnerModule, Icon, PageHeader],
  templateUrl: './data-page.html',
  styleUrl: './data-page.scss',
})
export class DataPage {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(BackupApi);

  protected readonly includeSecrets = signal(false);
  protected readonly busy = signal(false);
  protected readonly error = signal<string | null>(null);
  /** what the last download held */
  protected readonly done = signal<{ fileName: string; files: number; secrets: boolean } | null>(null);

  protected onSecrets(event: MatCheckboxChange): void {
    this.includeSecrets.set(event.checked);
    this.done.set(null);
  }

  /** Downloads the archive (through the HttpClient, so the credential goes with it) and saves it as a file. */
  protected async onDownload(): Promise<void> {
    this.busy.set(true);
    this.error.set(null);
    this.done.set(null);
    try {
      const backup = await this.api.download({ include_secrets: this.includeSecrets() });
      const url = URL.createObjectURL(backup.body);
      const link = document.createElement('a');
      link.href = url;
      link.download = backup.fileName;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
      this.done.set({ fileName: backup.fileName, files: backup.files, secrets: backup.secrets });
    } catch (error) {
      this.error.set(this.i18n.t('dataSettings.failed', { detail: errorMessage(error) }));
    } finally {
      this.busy.set(false);
    }
  }
}
