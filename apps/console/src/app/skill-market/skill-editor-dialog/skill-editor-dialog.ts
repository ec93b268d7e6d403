import { ChangeDetectionStrategy, Component, DestroyRef, HostListener, computed, inject, signal } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import type { SkillRecord } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MAT_DIALOG_DATA, MatDialog, MatDialogModule, MatDialogRef } from '@angular/material/dialog';

import { ApiError, errorMessage } from '../../core/api/api-error';
import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { Icon } from '../../shared/icon/icon';
import { confirmDiscard, guardUnload } from '../../shared/unsaved-changes/unsaved-changes';
import { SkillsApi } from '../skills-api';
import { draftError, isManageable, versionTime } from '../skill-view';

export interface SkillEditorDialogData {
  skill: SkillRecord;
  /** open in edit mode (manageable Skills only) */
  startEditing: boolean;
}

/**
 * The SKILL.md viewer/editor (openspec console): read-only until Edit; live validation with the server's rules; Save
 * sends the hash it read (a 409 keeps the draft and offers Reload); versions with restore. Closes with true when the
 * Skill changed. An unsaved draft is never dropped without a word: Escape, the backdrop and Cancel ask first, and
 * closing the tab gets the browser's prompt (openspec console "Requirement: Unsaved edits are guarded").
 */
@Component({
  selector: 'cc-skill-editor-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, Icon],
  templateUrl: './skill-editor-dialog.html',
  styleUrl: './skill-editor-dialog.scss',
})
export class SkillEditorDialog {
  private readonly data = inject<SkillEditorDialogData>(MAT_DIALOG_DATA);
  private readonly ref = inject<MatDialogRef<SkillEditorDialog, boolean>>(MatDialogRef);
  private readonly api = inject(SkillsApi);
  private readonly dialog = inject(MatDialog);
  protected readonly i18n = inject(I18n);

  protected readonly skill = this.data.skill;
  protected readonly manageable = isManageable(this.data.skill);
  protected readonly loading = signal(true);
  protected readonly loadError = signal<string | null>(null);
  protected readonly content = signal('');
  protected readonly hash = signal('');
  protected readonly draft = signal('');
  protected readonly editing = signal(false);
  protected readonly saving = signal(false);
  protected readonly conflict = signal(false);
  protected readonly saveError = signal<string | null>(null);
  protected readonly versions = signal<string[]>([]);
  protected readonly notice = signal<string | null>(null);
  private changed = false;

  protected readonly validation = computed(() => (this.editing() ? draftError(this.draft(), this.skill.name) : null));
  protected readonly canSave = computed(
    () => this.editing() && !this.saving() && this.draft() !== this.content() && this.validation() === null,
  );

  constructor() {
    void this.reload(this.data.startEditing && this.manageable);
    // Escape and backdrop clicks come here instead of closing the dialog straight away
    this.ref.disableClose = true;
    const destroyRef = inject(DestroyRef);
    this.ref
      .backdropClick()
      .pipe(takeUntilDestroyed(destroyRef))
      .subscribe(() => void this.requestClose());
    this.ref
      .keydownEvents()
      .pipe(takeUntilDestroyed(destroyRef))
      .subscribe((event) => {
        if (event.key !== 'Escape') return;
        event.preventDefault();
        void this.requestClose();
      });
  }

  /** The draft differs from the SKILL.md that was read. */
  hasUnsavedChanges(): boolean {
    return this.editing() && this.draft() !== this.content();
  }

  @HostListener('window:beforeunload', ['$event'])
  protected onBeforeUnload(event: BeforeUnloadEvent): void {
    guardUnload(event, this.hasUnsavedChanges());
  }

  private asking = false;

  /** Closes the dialog, asking first when there is an unsaved draft. */
  protected async requestClose(): Promise<void> {
    if (this.asking) return;
    if (this.hasUnsavedChanges()) {
      this.asking = true;
      try {
        if (!(await confirmDiscard(this.dialog, this.i18n))) return;
      } finally {
        this.asking = false;
      }
    }
    this.close();
  }

  protected versionLabel(version: string): string {
    return versionTime(version, this.i18n.locale()) ?? version;
  }

  protected sourceKey(): MessageKey {
    return `skills.source.${this.skill.source}`;
  }

  protected startEditing(): void {
    this.draft.set(this.content());
    this.editing.set(true);
  }

  protected async cancelEditing(): Promise<void> {
    if (this.hasUnsavedChanges() && !(await confirmDiscard(this.dialog, this.i18n))) return;
    this.editing.set(false);
    this.draft.set(this.content());
    this.conflict.set(false);
    this.saveError.set(null);
  }

  protected onInput(event: Event): void {
    this.draft.set((event.target as HTMLTextAreaElement).value);
  }

  /** Loads SKILL.md (and the versions); the draft is replaced only here. */
  protected async reload(edit = this.editing()): Promise<void> {
    this.loading.set(true);
    this.loadError.set(null);
    this.conflict.set(false);
    this.saveError.set(null);
    try {
      const body = await this.api.content(this.skill.name);
      this.content.set(body.content);
      this.hash.set(body.hash);
      this.draft.set(body.content);
      this.editing.set(edit && body.mutable);
      if (this.manageable) this.versions.set(await this.api.versions(this.skill.name));
    } catch (error) {
      this.loadError.set(errorMessage(error));
    } finally {
      this.loading.set(false);
    }
  }

  protected async save(): Promise<void> {
    if (!this.canSave()) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.conflict.set(false);
    try {
      await this.api.replace(this.skill.name, this.draft(), this.hash());
      this.ref.close(true);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) this.conflict.set(true);
      else this.saveError.set(error instanceof ApiError && error.detail ? error.detail : this.i18n.t('skills.editor.saveFailed'));
    } finally {
      this.saving.set(false);
    }
  }

  protected async rollback(version: string): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('skills.editor.rollbackTitle', { version }),
      body: this.i18n.t('skills.editor.rollbackBody'),
      confirm: this.i18n.t('skills.editor.rollback'),
      cancel: this.i18n.t('common.cancel'),
    });
    if (!confirmed) return;
    try {
      await this.api.rollback(this.skill.name, version);
      this.changed = true;
      await this.reload(false);
      this.notice.set(this.i18n.t('skills.editor.rolledBack', { version }));
    } catch (error) {
      this.saveError.set(errorMessage(error));
    }
  }

  protected close(): void {
    this.ref.close(this.changed);
  }
}
