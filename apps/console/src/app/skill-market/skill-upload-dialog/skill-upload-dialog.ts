import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialogModule, MatDialogRef } from '@angular/material/dialog';

import { errorMessage } from '../../core/api/api-error';
import { Icon } from '../../shared/icon/icon';
import { SkillsApi } from '../skills-api';
import { I18n } from '../../core/i18n/i18n';
import { isZipName, sizeKb } from '../skill-view';

/** ZIP upload of a Skill package (openspec console): a .zip is required; the server's error is shown as it is. */
@Component({
  selector: 'cc-skill-upload-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, Icon],
  template: `
    <h2 mat-dialog-title>{{ i18n.t('skills.upload.title') }}</h2>
    <mat-dialog-content class="cc-content">
      <p class="cc-muted">{{ i18n.t('skills.upload.subtitle') }}</p>
      <input
        #input
        type="file"
        accept=".zip,application/zip"
        hidden
        (change)="onPick($event)"
        data-testid="skill-upload-input"
      />
      <button
        type="button"
        class="cc-drop"
        [class.cc-over]="dragging()"
        (click)="input.click()"
        (dragover)="onDragOver($event)"
        (dragleave)="dragging.set(false)"
        (drop)="onDrop($event)"
        data-testid="skill-upload-drop"
      >
        <cc-icon name="add" />
        @if (file(); as file) {
          <span class="cc-file">{{ file.name }}</span>
          <span class="cc-muted">{{ i18n.t('skills.upload.size', { kb: kb(file.size) }) }}</span>
        } @else {
          <span>{{ i18n.t('skills.upload.choose') }}</span>
        }
      </button>
      @if (error(); as error) {
        <p class="cc-error" role="alert" data-testid="skill-upload-error">{{ error }}</p>
      }
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" [mat-dialog-close]="false">{{ i18n.t('skills.upload.cancel') }}</button>
      <button mat-flat-button type="button" [disabled]="uploading()" (click)="submit()" data-testid="skill-upload-submit">
        {{ uploading() ? i18n.t('skills.upload.uploading') : i18n.t('skills.upload.submit') }}
      </button>
    </mat-dialog-actions>
  `,
  styles: `
    .cc-content {
      display: flex;
      flex-direction: column;
      gap: 12px;
    }
    .cc-drop {
      display: flex;
      flex-direction: column;
      align-items: center;
      gap: 6px;
      padding: 28px 16px;
      border: 2px dashed var(--mat-sys-outline-variant);
      border-radius: 16px;
      background: transparent;
      color: var(--mat-sys-on-surface);
      font: var(--mat-sys-body-medium);
      cursor: pointer;
    }
    .cc-drop.cc-over,
    .cc-drop:hover {
      border-color: var(--mat-sys-primary);
    }
    .cc-file {
      font-weight: 600;
      overflow-wrap: anywhere;
    }
    .cc-muted {
      margin: 0;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }
    .cc-error {
      margin: 0;
      color: var(--mat-sys-error);
      font: var(--mat-sys-body-small);
      overflow-wrap: anywhere;
    }
  `,
})
export class SkillUploadDialog {
  private readonly api = inject(SkillsApi);
  private readonly ref = inject<MatDialogRef<SkillUploadDialog, boolean>>(MatDialogRef);
  protected readonly i18n = inject(I18n);

  protected readonly file = signal<File | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly uploading = signal(false);
  protected readonly dragging = signal(false);
  protected readonly kb = sizeKb;

  protected onPick(event: Event): void {
    const input = event.target as HTMLInputElement;
    this.choose(input.files?.[0] ?? null);
    input.value = '';
  }

  protected onDragOver(event: DragEvent): void {
    event.preventDefault();
    this.dragging.set(true);
  }

  protected onDrop(event: DragEvent): void {
    event.preventDefault();
    this.dragging.set(false);
    this.choose(event.dataTransfer?.files?.[0] ?? null);
  }

  protected async submit(): Promise<void> {
    const file = this.file();
    if (!file) {
      this.error.set(this.i18n.t('skills.upload.required'));
      return;
    }
    if (!isZipName(file.name)) {
      this.error.set(this.i18n.t('skills.upload.notZip'));
      return;
    }
    this.uploading.set(true);
    this.error.set(null);
    try {
      await this.api.import(file);
      this.ref.close(true);
    } catch (error) {
      this.error.set(errorMessage(error));
    } finally {
      this.uploading.set(false);
    }
  }

  private choose(file: File | null): void {
    this.file.set(file);
    this.error.set(file && !isZipName(file.name) ? this.i18n.t('skills.upload.notZip') : null);
  }
}
