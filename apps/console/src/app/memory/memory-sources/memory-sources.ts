import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import type { MemoryEntryTrust, MemoryEntryView, UntrustedSource } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { MemoryApi } from '../memory-api';
import { TrustedSources } from '../trusted-sources/trusted-sources';

/** entries shown per page (MEMORY.md may hold thousands; the server pages) */
export const SOURCES_PAGE_SIZE = 100;

/** The entries of MEMORY.md with where each came from (the provenance log), a page at a time; Verify for the owner. */
@Component({
  selector: 'cc-memory-sources',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, TrustedSources],
  templateUrl: './memory-sources.html',
  styleUrl: './memory-sources.scss',
})
export class MemorySources {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(MemoryApi);

  protected readonly rows = signal<MemoryEntryView[]>([]);
  protected readonly total = signal(0);
  protected readonly counts = signal<Record<MemoryEntryTrust, number> | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly page = signal(0);
  protected readonly pageCount = computed(() => Math.max(1, Math.ceil(this.total() / SOURCES_PAGE_SIZE)));

  constructor() {
    void this.load();
  }

  async load(page = this.page()): Promise<void> {
    try {
      const answer = await this.api.entries(page * SOURCES_PAGE_SIZE, SOURCES_PAGE_SIZE);
      const pages = Math.max(1, Math.ceil(answer.total / SOURCES_PAGE_SIZE));
      if (page >= pages && page > 0) return this.load(pages - 1);
      this.rows.set(answer.entries);
      this.total.set(answer.total);
      this.counts.set(answer.counts);
      this.page.set(page);
      this.error.set(null);
    } catch (err) {
      this.error.set(err instanceof Error ? err.message : String(err));
    }
  }

  protected go(page: number): void {
    void this.load(page);
  }

  protected async verify(row: MemoryEntryView): Promise<void> {
    try {
      await this.api.verifyEntry(row.entry);
    } finally {
      await this.load();
    }
  }

  protected sourceLabel(row: MemoryEntryView): string {
    const record = row.record;
    if (!record) return this.i18n.t('memory.sources.unknown');
    const origin = this.i18n.t(`memory.sources.origin.${record.origin}`);
    return record.chat_id ? `${origin} · ${record.chat_id}` : origin;
  }

  protected untrustedLabel(source: UntrustedSource): string {
    return `${source.kind}: ${source.name}`;
  }

  protected trustLabel(row: MemoryEntryView): string {
    return this.i18n.t(`memory.sources.trust.${row.trust}`);
  }

  protected countsLabel(): string {
    const counts = this.counts();
    if (!counts) return '';
    return this.i18n.t('memory.sources.counts', { total: this.total(), ...counts });
  }
}
