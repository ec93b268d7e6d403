import { ChangeDetectionStrategy, Component, inject, input, output } from '@angular/core';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { formatFileSize, type AttachmentChip } from './attachment-rules';

/**
 * Attachment chips: name, size, upload progress or error; with `removable` each has a remove button (the composer),
 * without it they are read-only (a sent message).
 */
@Component({
  selector: 'cc-attachment-chips',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    <ul class="cc-attachments" [attr.aria-label]="i18n.t('attachments.list')" data-testid="attachment-chips">
      @for (chip of chips(); track chip.key) {
        <li
          class="cc-attachment"
          [class.cc-attachment-error]="chip.status === 'error'"
          [attr.data-status]="chip.status"
          [attr.title]="chip.error ?? chip.receipt?.path ?? chip.name"
          data-testid="attachment-chip"
        >
          <cc-icon [name]="isImage(chip) ? 'image' : 'attach'" />
          <span class="cc-attachment-name" data-testid="attachment-name">{{ chip.name }}</span>
          <span class="cc-attachment-size">{{ size(chip.size) }}</span>
          @if (chip.status === 'uploading') {
            <progress
              class="cc-attachment-progress"
              max="1"
              [value]="chip.progress"
              [attr.aria-label]="i18n.t('attachments.uploading', { name: chip.name })"
            ></progress>
          } @else if (chip.status === 'error') {
            <span class="cc-attachment-failed" role="alert" data-testid="attachment-error">{{ chip.error }}</span>
          }
          @if (removable()) {
            <button
              type="button"
              class="cc-attachment-remove"
              (click)="remove.emit(chip.key)"
              [attr.aria-label]="i18n.t('attachments.remove', { name: chip.name })"
              [title]="i18n.t('attachments.remove', { name: chip.name })"
              data-testid="attachment-remove"
            >
              <cc-icon name="close" />
            </button>
          }
        </li>
      }
    </ul>
  `,
  styles: `
    .cc-attachments { display: flex; flex-wrap: wrap; gap: 6px; margin: 0; padding: 0; list-style: none; }
    .cc-attachment {
      display: inline-flex; align-items: center; gap: 4px; max-width: 100%; padding: 2px 8px; border-radius: 12px;
      font-size: 12px; line-height: 20px; background: var(--mat-sys-surface-container-high); color: var(--mat-sys-on-surface);
    }
    .cc-attachment cc-icon { width: 14px; height: 14px; flex: none; }
    .cc-attachment-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 220px; }
    .cc-attachment-size { opacity: 0.7; }
    .cc-attachment-progress { width: 48px; height: 6px; }
    .cc-attachment-error { background: var(--mat-sys-error-container); color: var(--mat-sys-on-error-container); }
    .cc-attachment-failed { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 260px; }
    .cc-attachment-remove {
      display: inline-flex; padding: 0; border: 0; background: none; color: inherit; cursor: pointer; border-radius: 50%;
    }
    .cc-attachment-remove:focus-visible { outline: 2px solid var(--mat-sys-primary); }
  `,
})
export class AttachmentChips {
  readonly chips = input.required<readonly AttachmentChip[]>();
  readonly removable = input(false);
  readonly remove = output<number>();

  protected readonly i18n = inject(I18n);

  protected size(bytes: number): string {
    return formatFileSize(bytes);
  }

  protected isImage(chip: AttachmentChip): boolean {
    return chip.receipt?.mime.startsWith('image/') === true;
  }
}
