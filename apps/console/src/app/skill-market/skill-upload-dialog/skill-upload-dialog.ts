import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialogModule, MatDialogRef } from '@angular/material/dialog';

import { ApiError, errorMessage } from '../../core/api/api-error';
import type { SkillArchiveCandidate, SkillPreApprovalItem, SkillRecord } from '@cashcode/contracts';
import { Icon } from '../../shared/icon/icon';
import { SkillsApi } from '../skills-api';
import { I18n } from '../../core/i18n/i18n';
import { importFollowUp, isZipName, sizeKb } from '../skill-view';
import { importedAwaitingApproval, preApprovalItemText } from '../skill-pre-approvals/pre-approvals-view';

/**
 * ZIP upload of a Skill package (openspec console): a .zip or .skill is required; the server's error is shown as it
 * is. A Skill named like a built-in asks for confirmation to replace it; an archive holding several Skills shows a
 * checklist of them and imports the checked ones. An imported Skill with allowed-tools pre-approves nothing until the
 * owner allows it: the dialog then lists what it would pre-approve and asks "Allow these pre-approvals?" (Allow grants
 * them for the imported content's hash; Not now keeps the Skill without them).
 */
@Component({
  selector: 'cc-skill-upload-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, Icon],
  template: `
    @if (review().length > 0) {
      <h2 mat-dialog-title>{{ i18n.t('skills.upload.preTitle') }}</h2>
      <mat-dialog-content class="cc-content" data-testid="skill-upload-pre-approvals">
        @for (skill of review(); track skill.name) {
          <section class="cc-list" [attr.data-testid]="'skill-upload-pre-' + skill.name">
            <p>{{ i18n.t('skills.upload.preIntro', { name: skill.display_name || skill.name }) }}</p>
            <ul>
              @for (item of skill.pre_approvals?.summary ?? []; track $index) {
                <li [class.cc-error]="item.broad" data-testid="skill-upload-pre-item">{{ itemText(item) }}</li>
              }
            </ul>
            @if (skill.pre_approvals?.broad) {
              <p class="cc-error" role="note">{{ i18n.t('skills.pre.broadWarning') }}</p>
            }
          </section>
        }
        @if (error(); as error) {
          <p class="cc-error" role="alert" data-testid="skill-upload-error">{{ error }}</p>
        }
      </mat-dialog-content>
      <mat-dialog-actions align="end">
        <button mat-button type="button" [mat-dialog-close]="true" data-testid="skill-upload-pre-not-now">
          {{ i18n.t('skills.upload.preNotNow') }}
        </button>
        <button mat-flat-button type="button" [disabled]="uploading()" (click)="allow()" data-testid="skill-upload-pre-allow">
          {{ i18n.t('skills.upload.preAllow') }}
        </button>
      </mat-dialog-actions>
    } @else {
    <h2 mat-dialog-title>{{ i18n.t('skills.upload.title') }}</h2>
    <mat-dialog-content class="cc-content">
      <p class="cc-muted">{{ i18n.t('skills.upload.subtitle') }}</p>
      <input
        #input
        type="file"
        accept=".zip,.skill,application/zip"
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
      @if (confirmReplace()) {
        <label class="cc-check" data-testid="skill-upload-replace">
          <input type="checkbox" [checked]="replaceBuiltin()" (change)="replaceBuiltin.set(!replaceBuiltin())" />
          {{ i18n.t('skills.upload.replaceBuiltin') }}
        </label>
      }
      @if (candidates().length > 0) {
        <fieldset class="cc-list" data-testid="skill-upload-candidates">
          <legend>{{ i18n.t('skills.upload.chooseSkills') }}</legend>
          @for (candidate of candidates(); track candidate.path) {
            <label class="cc-check" [class.cc-muted]="candidate.name === null">
              <input
                type="checkbox"
                [disabled]="candidate.name === null"
                [checked]="candidate.name !== null && selected().includes(candidate.name)"
                (change)="toggle(candidate.name)"
                [attr.data-testid]="'skill-upload-candidate-' + (candidate.name ?? candidate.path)"
              />
              <span class="cc-file">{{ candidate.name ?? candidate.path }}</span>
              <span class="cc-muted">{{ candidate.path || '/' }}{{ candidate.error ? ' — ' + candidate.error : '' }}</span>
            </label>
          }
        </fieldset>
      }
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" [mat-dialog-close]="false">{{ i18n.t('skills.upload.cancel') }}</button>
      <button mat-flat-button type="button" [disabled]="uploading()" (click)="submit()" data-testid="skill-upload-submit">
        {{ uploading() ? i18n.t('skills.upload.uploading') : i18n.t('skills.upload.submit') }}
      </button>
    </mat-dialog-actions>
    }
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
    .cc-check {
      display: flex;
      gap: 8px;
      align-items: baseline;
      flex-wrap: wrap;
      font: var(--mat-sys-body-medium);
    }
    .cc-list {
      display: flex;
      flex-direction: column;
      gap: 6px;
      margin: 0;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 12px;
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
  /** a built-in of that name exists: the user may confirm shadowing it */
  protected readonly confirmReplace = signal(false);
  protected readonly replaceBuiltin = signal(false);
  /** the Skills of an archive holding several, and the names checked */
  protected readonly candidates = signal<SkillArchiveCandidate[]>([]);
  protected readonly selected = signal<string[]>([]);
  /** imported Skills whose pre-approvals wait for the owner's answer */
  protected readonly review = signal<SkillRecord[]>([]);

  protected itemText(item: SkillPreApprovalItem): string {
    const { key, params } = preApprovalItemText(item);
    return this.i18n.t(key, params);
  }

  /** Grants each reviewed Skill's pre-approvals for the content just imported (the hash of the import response). */
  protected async allow(): Promise<void> {
    this.uploading.set(true);
    this.error.set(null);
    try {
      for (const skill of this.review()) {
        const hash = skill.pre_approvals?.hash;
        if (hash) await this.api.grantPreApprovals(skill.name, hash);
      }
      this.ref.close(true);
    } catch (error) {
      this.error.set(this.i18n.t('skills.pre.failed', { detail: errorMessage(error) }));
    } finally {
      this.uploading.set(false);
    }
  }

  protected toggle(name: string | null): void {
    if (name === null) return;
    this.selected.update((list) => (list.includes(name) ? list.filter((item) => item !== name) : [...list, name]));
  }

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
      const imported = await this.api.import(file, { select: this.selected(), replaceBuiltin: this.replaceBuiltin() });
      const waiting = importedAwaitingApproval(imported.imported ?? [imported]);
      if (waiting.length > 0) this.review.set(waiting);
      else this.ref.close(true);
    } catch (error) {
      this.error.set(errorMessage(error));
      const next = error instanceof ApiError ? importFollowUp(error.status, error.code, error.problem) : null;
      if (next?.kind === 'replace_builtin') this.confirmReplace.set(true);
      if (next?.kind === 'select') {
        this.candidates.set(next.candidates);
        if (this.selected().length === 0) this.error.set(this.i18n.t('skills.upload.severalSkills'));
      }
    } finally {
      this.uploading.set(false);
    }
  }

  private choose(file: File | null): void {
    this.file.set(file);
    this.confirmReplace.set(false);
    this.replaceBuiltin.set(false);
    this.candidates.set([]);
    this.selected.set([]);
    this.error.set(file && !isZipName(file.name) ? this.i18n.t('skills.upload.notZip') : null);
  }
}
