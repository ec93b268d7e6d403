import { ChangeDetectionStrategy, Component, HostListener, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatTooltipModule } from '@angular/material/tooltip';
import type { PriceTable, SpendLimitSettings } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { FieldError } from '../../shared/field-error';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { guardUnload, type HasUnsavedChanges } from '../../shared/unsaved-changes/unsaved-changes';
import { UsageApi } from '../usage-api';
import { UsageLive } from '../usage-live';
import {
  buildLimitSettings,
  buildPriceTable,
  emptyLimit,
  emptyPrice,
  limitFieldKnown,
  limitsDraft,
  mapSaveError,
  priceDrafts,
  priceFieldKnown,
  sameDrafts,
  validateLimits,
  validatePrices,
  type ClientErrors,
  type FieldErrors,
  type LimitDraft,
  type LimitsDraft,
  type PriceDraft,
} from '../usage-settings-form';

type Section = 'prices' | 'limits';

interface SectionMessage {
  kind: 'success' | 'error';
  text: string;
}

/**
 * Settings > Prices & limits: the price table (per million tokens, per provider and model) and the spend limits with
 * the warning share. Each editor saves on its own; unsaved edits are guarded like the other editors.
 */
@Component({
  selector: 'cc-usage-settings-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatFormFieldModule, MatInputModule, MatProgressSpinnerModule, MatTooltipModule, FieldError, Icon, PageHeader],
  templateUrl: './usage-settings-page.html',
  styleUrl: './usage-settings-page.scss',
})
export class UsageSettingsPage implements HasUnsavedChanges {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(UsageApi);
  private readonly live = inject(UsageLive);

  protected readonly loading = signal(true);
  protected readonly loadError = signal<string | null>(null);

  private readonly savedPrices = signal<PriceDraft[]>([]);
  protected readonly prices = signal<PriceDraft[]>([]);
  private readonly savedLimits = signal<LimitsDraft>(limitsDraft(null));
  protected readonly limits = signal<LimitsDraft>(limitsDraft(null));

  protected readonly busy = signal<Section | null>(null);
  protected readonly messages = signal<Record<Section, SectionMessage | null>>({ prices: null, limits: null });
  private readonly submitted = signal<Record<Section, boolean>>({ prices: false, limits: false });
  private readonly serverErrors = signal<Record<Section, FieldErrors>>({ prices: {}, limits: {} });
  private readonly clientErrors = computed<Record<Section, ClientErrors>>(() => ({
    prices: this.submitted().prices ? validatePrices(this.prices()) : {},
    limits: this.submitted().limits ? validateLimits(this.limits()) : {},
  }));

  protected readonly pricesDirty = computed(() => !sameDrafts(this.prices(), this.savedPrices()));
  protected readonly limitsDirty = computed(() => !sameDrafts(this.limits(), this.savedLimits()));

  constructor() {
    void this.load();
  }

  hasUnsavedChanges(): boolean {
    return this.pricesDirty() || this.limitsDirty();
  }

  @HostListener('window:beforeunload', ['$event'])
  protected onBeforeUnload(event: BeforeUnloadEvent): void {
    guardUnload(event, this.hasUnsavedChanges());
  }

  protected async load(): Promise<void> {
    this.loading.set(true);
    this.loadError.set(null);
    try {
      const [prices, limits] = await Promise.all([this.api.prices(), this.api.limits()]);
      this.applyPrices(prices);
      this.applyLimits(limits);
    } catch (error) {
      this.loadError.set(errorMessage(error));
    } finally {
      this.loading.set(false);
    }
  }

  /** The message at a field: the server's, else the client-side check's (after a save was tried). */
  protected fieldError(section: Section, path: string): string | null {
    const server = this.serverErrors()[section][path];
    if (server) return server;
    const client = this.clientErrors()[section][path];
    return client ? this.i18n.t(client) : null;
  }

  // ---- prices ----

  protected addPrice(): void {
    const last = this.prices().at(-1);
    this.prices.update((rows) => [...rows, emptyPrice(last?.currency || 'USD')]);
    this.clearMessage('prices');
  }

  protected removePrice(index: number): void {
    this.prices.update((rows) => rows.filter((_row, i) => i !== index));
    // the indices of the server's messages no longer match the rows
    this.setServerErrors('prices', {});
    this.clearMessage('prices');
  }

  protected editPrice(index: number, field: keyof PriceDraft, event: Event, path: string): void {
    const value = (event.target as HTMLInputElement | HTMLSelectElement).value;
    this.prices.update((rows) => rows.map((row, i) => (i === index ? { ...row, [field]: value } : row)));
    this.clearField('prices', `prices.${index}.${path}`);
  }

  protected async savePrices(): Promise<void> {
    this.submitted.update((s) => ({ ...s, prices: true }));
    this.setServerErrors('prices', {});
    if (Object.keys(validatePrices(this.prices())).length > 0) return;
    const rows = this.prices().length;
    await this.save('prices', async () => this.applyPrices(await this.api.savePrices(buildPriceTable(this.prices()))), (path) =>
      priceFieldKnown(path, rows),
    );
  }

  // ---- limits ----

  protected addLimit(): void {
    this.limits.update((draft) => ({ ...draft, limits: [...draft.limits, emptyLimit(draft.limits)] }));
    this.clearMessage('limits');
  }

  protected removeLimit(index: number): void {
    this.limits.update((draft) => ({ ...draft, limits: draft.limits.filter((_row, i) => i !== index) }));
    this.setServerErrors('limits', {});
    this.clearMessage('limits');
  }

  protected editLimit(index: number, field: keyof LimitDraft, event: Event): void {
    const value = (event.target as HTMLInputElement | HTMLSelectElement).value;
    this.limits.update((draft) => ({
      ...draft,
      limits: draft.limits.map((row, i) => (i === index ? { ...row, [field]: value } : row)),
    }));
    this.clearField('limits', `limits.${index}.${field}`);
  }

  protected editWarnAt(event: Event): void {
    const warnAt = (event.target as HTMLInputElement).value;
    this.limits.update((draft) => ({ ...draft, warnAt }));
    this.clearField('limits', 'warn_at');
  }

  protected async saveLimits(): Promise<void> {
    this.submitted.update((s) => ({ ...s, limits: true }));
    this.setServerErrors('limits', {});
    if (Object.keys(validateLimits(this.limits())).length > 0) return;
    const rows = this.limits().limits.length;
    await this.save(
      'limits',
      async () => {
        this.applyLimits(await this.api.saveLimits(buildLimitSettings(this.limits())));
        // the chat banner follows the new limits at once
        void this.live.refreshLimits();
      },
      (path) => limitFieldKnown(path, rows),
    );
  }

  // ---- internals ----

  private applyPrices(table: PriceTable): void {
    const drafts = priceDrafts(table);
    this.savedPrices.set(drafts);
    this.prices.set(drafts);
  }

  private applyLimits(settings: SpendLimitSettings): void {
    const draft = limitsDraft(settings);
    this.savedLimits.set(draft);
    this.limits.set(draft);
  }

  private async save(section: Section, task: () => Promise<void>, knownField: (path: string) => boolean): Promise<void> {
    this.busy.set(section);
    this.clearMessage(section);
    try {
      await task();
      this.submitted.update((s) => ({ ...s, [section]: false }));
      this.messages.update((m) => ({ ...m, [section]: { kind: 'success', text: this.i18n.t('usageSettings.saved') } }));
    } catch (error) {
      const mapped = mapSaveError(error, knownField);
      this.setServerErrors(section, mapped.fields);
      if (mapped.general) this.messages.update((m) => ({ ...m, [section]: { kind: 'error', text: mapped.general ?? '' } }));
    } finally {
      this.busy.set(null);
    }
  }

  private setServerErrors(section: Section, errors: FieldErrors): void {
    this.serverErrors.update((all) => ({ ...all, [section]: errors }));
  }

  private clearField(section: Section, path: string): void {
    const errors = this.serverErrors()[section];
    if (errors[path] === undefined) return;
    const next = { ...errors };
    delete next[path];
    this.setServerErrors(section, next);
  }

  private clearMessage(section: Section): void {
    if (this.messages()[section] !== null) this.messages.update((m) => ({ ...m, [section]: null }));
  }
}
