import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, BACKUP_HEADERS, type BackupRequest } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** A backup as downloaded: the archive, its file name and what the server said about it. */
export interface DownloadedBackup {
  body: Blob;
  fileName: string;
  files: number;
  secrets: boolean;
}

/** `attachment; filename="cashcode-backup-….zip"` → the name; a fallback when the header is missing or odd. */
export function backupFileName(disposition: string | null): string {
  const match = /filename="(cashcode-backup-[\d-]+\.zip)"/.exec(disposition ?? '');
  return match?.[1] ?? 'cashcode-backup.zip';
}

/** REST call of Settings > Data (openspec backup): the backup archive. */
@Injectable({ providedIn: 'root' })
export class BackupApi {
  private readonly http = inject(HttpClient);

  async download(request: BackupRequest): Promise<DownloadedBackup> {
    const response = await firstValueFrom(this.http.post(API_PATHS.backup, request, { observe: 'response', responseType: 'blob' }));
    return {
      body: response.body ?? new Blob([]),
      fileName: backupFileName(response.headers.get('Content-Disposition')),
      files: Number(response.headers.get(BACKUP_HEADERS.files) ?? 0),
      secrets: response.headers.get(BACKUP_HEADERS.secrets) === 'true',
    };
  }
}
