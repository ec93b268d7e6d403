import { HttpClient, HttpEventType } from '@angular/common/http';
import { Injectable, computed, inject, signal, type OnDestroy } from '@angular/core';
import { API_PATHS, apiPath, type AttachmentUploadResponse } from '@cashcode/contracts';
import { firstValueFrom, type Subscription } from 'rxjs';

import { ApiError } from '../../core/api/api-error';
import { uploadedReceipts, type AttachmentChip } from './attachment-rules';

/**
 * The files of one composer (provided by the composer): each is uploaded on its own with
 * `POST /api/sessions/{chat_id}/attachments` (so each chip has its own progress and error), can be removed before
 * sending (an uploaded one is deleted on the server too) and is forgotten once its message was sent.
 */
@Injectable()
export class AttachmentUploads implements OnDestroy {
  private readonly http = inject(HttpClient);
  private readonly running = new Map<number, Subscription>();
  private nextKey = 1;
  private chatId: string | null = null;

  readonly chips = signal<readonly AttachmentChip[]>([]);
  readonly uploading = computed(() => this.chips().some((chip) => chip.status === 'uploading'));
  readonly receipts = computed(() => uploadedReceipts(this.chips()));

  /** Uploads files for a chat. */
  add(chatId: string, files: readonly File[]): void {
    this.chatId = chatId;
    for (const file of files) {
      const key = this.nextKey++;
      this.chips.update((chips) => [...chips, { key, name: file.name, size: file.size, status: 'uploading', progress: 0 }]);
      const form = new FormData();
      form.append('files', file, file.name);
      const subscription = this.http
        .post<AttachmentUploadResponse>(apiPath(API_PATHS.sessions, chatId, 'attachments'), form, {
          reportProgress: true,
          observe: 'events',
        })
        .subscribe({
          next: (event) => {
            if (event.type === HttpEventType.UploadProgress && event.total) {
              const progress = Math.min(1, event.loaded / event.total);
              this.patch(key, { progress });
            } else if (event.type === HttpEventType.Response) {
              const receipt = event.body?.attachments[0];
              if (receipt) this.patch(key, { status: 'done', progress: 1, receipt, name: receipt.name, size: receipt.size });
            }
          },
          error: (error: unknown) => {
            this.running.delete(key);
            this.patch(key, { status: 'error', error: error instanceof ApiError ? error.detail : String(error) });
          },
          complete: () => this.running.delete(key),
        });
      this.running.set(key, subscription);
    }
  }

  /** Removes a chip before sending; an uploaded file is deleted on the server (a failure there is not shown). */
  remove(key: number): void {
    const chip = this.chips().find((entry) => entry.key === key);
    if (!chip) return;
    this.running.get(key)?.unsubscribe();
    this.running.delete(key);
    this.chips.update((chips) => chips.filter((entry) => entry.key !== key));
    if (chip.status === 'done' && chip.receipt && this.chatId) {
      const url = apiPath(API_PATHS.sessions, this.chatId, 'attachments', chip.receipt.name);
      void firstValueFrom(this.http.delete<void>(url)).catch(() => undefined);
    }
  }

  /** Forgets every chip (after the message was sent: the files stay, the message refers to them). */
  clear(): void {
    for (const subscription of this.running.values()) subscription.unsubscribe();
    this.running.clear();
    this.chips.set([]);
  }

  /** Another chat was opened: the unsent files of the previous one are removed. */
  discard(): void {
    for (const chip of this.chips()) this.remove(chip.key);
  }

  ngOnDestroy(): void {
    for (const subscription of this.running.values()) subscription.unsubscribe();
  }

  private patch(key: number, changes: Partial<AttachmentChip>): void {
    this.chips.update((chips) => chips.map((chip) => (chip.key === key ? { ...chip, ...changes } : chip)));
  }
}
