import { Injectable, computed, inject, signal } from '@angular/core';
import type { SkillAvailability, SkillRecord, SkillSource } from '@cashcode/contracts';

import { errorMessage } from '../core/api/api-error';
import { SkillsApi } from './skills-api';
import { invalidRows, pageCount, type InvalidPackageRow } from './skill-view';

export const SKILL_PAGE_SIZE = 20;
export const SEARCH_DEBOUNCE_MS = 250;

export interface SkillFilters {
  source: SkillSource | null;
  enabled: boolean | null;
  availability: SkillAvailability | null;
}

/** State of the Skill Market: one page of Skills, the diagnostics, filters, search and row actions. */
@Injectable()
export class SkillMarketStore {
  private readonly api = inject(SkillsApi);

  private readonly items = signal<SkillRecord[]>([]);
  private readonly totalCount = signal(0);
  private readonly invalid = signal<InvalidPackageRow[]>([]);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly running = signal<string | null>(null);
  private readonly actionFailure = signal<string | null>(null);
  private readonly queryText = signal('');
  private readonly currentPage = signal(1);
  private readonly filterState = signal<SkillFilters>({ source: null, enabled: null, availability: null });
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  private loadSequence = 0;

  readonly skills = this.items.asReadonly();
  readonly total = this.totalCount.asReadonly();
  readonly invalidPackages = this.invalid.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly actionError = this.actionFailure.asReadonly();
  readonly pending = this.running.asReadonly();
  readonly query = this.queryText.asReadonly();
  readonly page = this.currentPage.asReadonly();
  readonly filters = this.filterState.asReadonly();
  readonly pages = computed(() => pageCount(this.totalCount(), SKILL_PAGE_SIZE));
  readonly busy = computed(() => this.running() !== null);

  async load(): Promise<void> {
    const sequence = ++this.loadSequence;
    this.loadFailure.set(null);
    if (this.items().length === 0) this.loadingFlag.set(true);
    const filters = this.filterState();
    try {
      const body = await this.api.list({
        source: filters.source ?? undefined,
        enabled: filters.enabled ?? undefined,
        availability: filters.availability ?? undefined,
        query: this.queryText(),
        page: this.currentPage(),
        page_size: SKILL_PAGE_SIZE,
      });
      if (sequence !== this.loadSequence) return;
      const pages = pageCount(body.total, SKILL_PAGE_SIZE);
      if (this.currentPage() > pages) {
        // the page vanished (e.g. after a delete): jump to the last page
        this.currentPage.set(pages);
        await this.load();
        return;
      }
      this.items.set(body.items);
      this.totalCount.set(body.total);
      this.invalid.set(invalidRows(body.invalid));
    } catch (error) {
      if (sequence === this.loadSequence) this.loadFailure.set(errorMessage(error));
    } finally {
      if (sequence === this.loadSequence) this.loadingFlag.set(false);
    }
  }

  /** Search text with a 250 ms debounce; resets to page 1. */
  search(text: string): void {
    this.queryText.set(text);
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      this.searchTimer = null;
      this.currentPage.set(1);
      void this.load();
    }, SEARCH_DEBOUNCE_MS);
  }

  setFilters(change: Partial<SkillFilters>): void {
    this.filterState.update((filters) => ({ ...filters, ...change }));
    this.currentPage.set(1);
    void this.load();
  }

  goTo(page: number): void {
    const target = Math.min(Math.max(1, page), this.pages());
    if (target === this.currentPage()) return;
    this.currentPage.set(target);
    void this.load();
  }

  setEnabled(skill: SkillRecord, enabled: boolean): Promise<void> {
    return this.run(skill.name, () => this.api.setEnabled(skill.name, enabled));
  }

  remove(skill: SkillRecord): Promise<void> {
    return this.run(skill.name, () => this.api.delete(skill.name));
  }

  removeInvalid(row: InvalidPackageRow): Promise<void> {
    return this.run(row.key, () => this.api.deleteInvalid(row.source, row.directory));
  }

  dispose(): void {
    if (this.searchTimer) clearTimeout(this.searchTimer);
  }

  private async run(key: string, call: () => Promise<unknown>): Promise<void> {
    if (this.running()) return;
    this.running.set(key);
    this.actionFailure.set(null);
    try {
      await call();
    } catch (error) {
      this.actionFailure.set(errorMessage(error));
    } finally {
      this.running.set(null);
      await this.load();
    }
  }
}
