import { ChangeDetectionStrategy, Component, computed, inject, input, output } from '@angular/core';

import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { CatalogStatus } from './capability-catalog';
import { CAPABILITY_KINDS, type CapabilityItem, type CapabilityKind, type PickerLevel } from './capability-rules';

/** Skeleton rows while a list loads. */
const SKELETON_ROWS = [0, 1, 2];

/**
 * The `@` picker popup (openspec console), presentational: level 1 offers MCP and Skill, level 2 the (already filtered)
 * items of one kind with loading, error and empty states. Pressing a row never moves the focus out of the textarea.
 */
@Component({
  selector: 'cc-capability-picker',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  templateUrl: './capability-picker.html',
  styleUrl: './capability-picker.scss',
})
export class CapabilityPicker {
  readonly listId = input.required<string>();
  readonly level = input.required<PickerLevel>();
  readonly query = input('');
  readonly active = input(0);
  readonly items = input<readonly CapabilityItem[]>([]);
  readonly status = input<CatalogStatus>('idle');
  readonly error = input<string | null>(null);

  readonly chooseKind = output<CapabilityKind>();
  readonly choose = output<CapabilityItem>();
  readonly hover = output<number>();
  readonly back = output<void>();
  readonly retry = output<void>();

  protected readonly i18n = inject(I18n);
  protected readonly kinds = CAPABILITY_KINDS;
  protected readonly skeletons = SKELETON_ROWS;
  protected readonly kind = computed<CapabilityKind | null>(() => {
    const level = this.level();
    return level === 'category' ? null : level;
  });

  optionId(index: number): string {
    return `${this.listId()}-option-${index}`;
  }

  protected kindLabel(kind: CapabilityKind): string {
    return this.i18n.t(kind === 'mcp' ? 'picker.mcp' : 'picker.skill');
  }

  protected kindHint(kind: CapabilityKind): string {
    return this.i18n.t(kind === 'mcp' ? 'picker.mcpHint' : 'picker.skillHint');
  }

  protected description(item: CapabilityItem): string {
    if (item.description.trim() !== '') return item.description;
    return item.kind === 'mcp' ? item.name : this.i18n.t('picker.noDescription');
  }

  /** Keeps the focus (and the caret) in the textarea while a row is pressed. */
  protected keepFocus(event: Event): void {
    event.preventDefault();
  }
}
