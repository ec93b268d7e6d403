import { ChangeDetectionStrategy, Component, HostListener, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatTabsModule } from '@angular/material/tabs';
import type { DreamRun } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { guardUnload, type HasUnsavedChanges } from '../../shared/unsaved-changes/unsaved-changes';
import { BackgroundModelPicker } from '../background-model-picker/background-model-picker';
import { DocumentEditor } from '../document-editor/document-editor';
import { DreamHistory } from '../dream-history/dream-history';
import { MemoryStore } from '../memory-store';
import { MemorySources } from '../memory-sources/memory-sources';

/** Memory: the MEMORY.md and SOUL.md editors, each entry's source (Verify), the Dream history with diffs, Run now and Revert. */
@Component({
  selector: 'cc-memory-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButtonModule,
    MatProgressSpinnerModule,
    MatTabsModule,
    Icon,
    PageHeader,
    DocumentEditor,
    DreamHistory,
    MemorySources,
    BackgroundModelPicker,
  ],
  providers: [MemoryStore],
  templateUrl: './memory-page.html',
  styleUrl: './memory-page.scss',
})
export class MemoryPage implements HasUnsavedChanges {
  protected readonly store = inject(MemoryStore);
  protected readonly i18n = inject(I18n);
  private readonly dialog = inject(MatDialog);

  protected readonly tab = signal(0);

  constructor() {
    void this.store.load();
  }

  /** MEMORY.md or SOUL.md has a draft that differs from what was saved. */
  hasUnsavedChanges(): boolean {
    return this.store.isDirty('memory') || this.store.isDirty('soul');
  }

  @HostListener('window:beforeunload', ['$event'])
  protected onBeforeUnload(event: BeforeUnloadEvent): void {
    guardUnload(event, this.hasUnsavedChanges());
  }

  protected async onRevert(run: DreamRun): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('memory.dream.revertTitle'),
      body: this.i18n.t('memory.dream.revertBody'),
      confirm: this.i18n.t('memory.dream.revert'),
      cancel: this.i18n.t('common.cancel'),
    });
    if (confirmed) await this.store.revert(run);
  }

  protected async onApply(run: DreamRun): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('memory.dream.applyTitle'),
      body: this.i18n.t('memory.dream.applyBody'),
      confirm: this.i18n.t('memory.dream.apply'),
      cancel: this.i18n.t('common.cancel'),
    });
    if (confirmed) await this.store.apply(run);
  }
}
