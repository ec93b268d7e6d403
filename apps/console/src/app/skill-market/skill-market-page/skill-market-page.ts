import { ChangeDetectionStrategy, Component, DestroyRef, inject } from '@angular/core';
import type { SkillAvailability, SkillRecord, SkillSource } from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MatDialog } from '@angular/material/dialog';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatSelectModule } from '@angular/material/select';
import { MatSlideToggleModule } from '@angular/material/slide-toggle';
import { MatTooltipModule } from '@angular/material/tooltip';
import { firstValueFrom } from 'rxjs';

import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Banner } from '../../shared/banner/banner';
import { confirmAction } from '../../shared/confirm-dialog/confirm-dialog';
import { EmptyState } from '../../shared/empty-state/empty-state';
import { Icon } from '../../shared/icon/icon';
import { ListSkeleton } from '../../shared/list-skeleton/list-skeleton';
import { PageHeader } from '../../shared/page-header/page-header';
import { SkillEditorDialog, type SkillEditorDialogData } from '../skill-editor-dialog/skill-editor-dialog';
import { SkillMarketStore } from '../skill-market-store';
import { SkillPreApprovalsPanel } from '../skill-pre-approvals/skill-pre-approvals-panel';
import { SkillUploadDialog } from '../skill-upload-dialog/skill-upload-dialog';
import { isManageable, metadataText, statusOf, type InvalidPackageRow } from '../skill-view';

/**
 * Skill Market (openspec console): searchable, filterable, paginated Skills with source/status badges and missing
 * dependencies; view/edit (SKILL.md editor with versions), enable/disable, delete; ZIP upload; invalid packages.
 */
@Component({
  selector: 'cc-skill-market-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButtonModule,
    MatFormFieldModule,
    MatInputModule,
    MatSelectModule,
    MatSlideToggleModule,
    MatTooltipModule,
    Banner,
    EmptyState,
    Icon,
    ListSkeleton,
    PageHeader,
    SkillPreApprovalsPanel,
  ],
  providers: [SkillMarketStore],
  templateUrl: './skill-market-page.html',
  styleUrl: './skill-market-page.scss',
})
export class SkillMarketPage {
  protected readonly store = inject(SkillMarketStore);
  protected readonly i18n = inject(I18n);
  private readonly dialog = inject(MatDialog);

  protected readonly sources: readonly SkillSource[] = ['builtin', 'user', 'agent'];
  protected readonly availabilities: readonly SkillAvailability[] = ['available', 'missing_dependency', 'disabled'];
  protected readonly manageable = isManageable;

  constructor() {
    void this.store.load();
    inject(DestroyRef).onDestroy(() => this.store.dispose());
  }

  protected sourceKey(source: SkillSource): MessageKey {
    return `skills.source.${source}`;
  }

  protected availabilityKey(availability: SkillAvailability): MessageKey {
    return `skills.availability.${availability}`;
  }

  protected statusKey(skill: SkillRecord): MessageKey {
    return `skills.availability.${statusOf(skill)}`;
  }

  protected status(skill: SkillRecord): string {
    return statusOf(skill);
  }

  protected missing(skill: SkillRecord): string {
    return skill.missing.slice(0, 6).join(' · ');
  }

  protected readonly metadataText = metadataText;

  protected shadowed(skill: SkillRecord): string {
    return skill.shadowed_sources.map((source) => this.i18n.t(this.sourceKey(source))).join(', ');
  }

  protected onSearch(event: Event): void {
    this.store.search((event.target as HTMLInputElement).value);
  }

  protected onSource(value: SkillSource | 'all'): void {
    this.store.setFilters({ source: value === 'all' ? null : value });
  }

  protected onEnabled(value: 'all' | 'true' | 'false'): void {
    this.store.setFilters({ enabled: value === 'all' ? null : value === 'true' });
  }

  protected onAvailability(value: SkillAvailability | 'all'): void {
    this.store.setFilters({ availability: value === 'all' ? null : value });
  }

  protected async open(skill: SkillRecord, startEditing: boolean): Promise<void> {
    const ref = this.dialog.open<SkillEditorDialog, SkillEditorDialogData, boolean>(SkillEditorDialog, {
      data: { skill, startEditing },
      width: '900px',
      maxWidth: '96vw',
      autoFocus: 'dialog',
      restoreFocus: true,
    });
    const changed = await firstValueFrom(ref.afterClosed());
    if (changed) await this.store.load();
  }

  protected async openUpload(): Promise<void> {
    const ref = this.dialog.open<SkillUploadDialog, undefined, boolean>(SkillUploadDialog, {
      width: '560px',
      maxWidth: '96vw',
      restoreFocus: true,
    });
    const imported = await firstValueFrom(ref.afterClosed());
    if (imported) await this.store.load();
  }

  protected async confirmDelete(skill: SkillRecord): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('skills.deleteTitle', { name: skill.display_name || skill.name }),
      body: this.i18n.t('skills.deleteBody'),
      confirm: this.i18n.t('common.delete'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.remove(skill);
  }

  protected async confirmDeleteInvalid(row: InvalidPackageRow): Promise<void> {
    const confirmed = await confirmAction(this.dialog, {
      title: this.i18n.t('skills.deleteInvalidTitle', { dir: row.directory }),
      body: this.i18n.t('skills.deleteInvalidBody'),
      confirm: this.i18n.t('common.delete'),
      cancel: this.i18n.t('common.cancel'),
      danger: true,
    });
    if (confirmed) await this.store.removeInvalid(row);
  }
}
