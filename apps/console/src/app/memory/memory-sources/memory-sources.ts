import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import type { MemoryProvenanceRecord, UntrustedSource } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { MemoryApi } from '../memory-api';
import { entrySources, type EntrySource } from './entry-sources';

/** entries shown per page (MEMORY.md may hold thousands) */
export const SOURCES_PAGE_SIZE = 100;

/** The entries of MEMORY.md with where each came from (the provenance log), a page at a time; Verify for the owner. */
@Component({
  selector: 'cc-memory-sources',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule],
  templateUrl: './memory-sources.html',
  styleUrl: './memory-sources.scss',
})
export class MemorySources {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(MemoryApi);

  private readonly memory = signal('');
  private readonly records = signal<MemoryProvenanceRecord[]>([]);
  protected readonly error = signal<string | null>(null);
  protected readonly page = signal(0);
  protected readonly rows = computed(() => entrySources(this.memory(), this.records()));
  protected readonly pageCount = computed(() => Math.max(1, Math.ceil(this.rows().length / SOURCES_PAGE_SIZE)));
  protected readonly visible = computed(() => this.rows().slice(this.page() * SOURCES_PAGE_SIZE, (this.page() + 1) * SOURCES_PAGE_SIZE));

  constructor() {
    void this.load();
  }

  async load(): Promise<void> {
    try {
      const [document, records] = await Promise.all([this.api.getDocument('memory'), this.api.provenance()]);
      this.memory.set(document.content);
      this.records.set(records);
      this.page.set(Math.min(this.page(), this.pageCount() - 1));
      this.error.set(null);
    } catch (err) {
      this.error.set(err instanceof Error ? err.message : String(err));
    }
  }

  protected async verify(row: EntrySource): Promise<void> {
    try {
      const record = await this.api.verifyEntry(row.entry);
      this.records.update((current) => [...current, record]);
    } catch {
      await this.load();
    }
  }

  protected sourceLabel(row: EntrySource): string {
    const record = row.record;
    if (!record) return this.i18n.t('memory.sources.unknown');
    const origin = this.i18n.t(`memory.sources.origin.${record.origin}`);
    return record.chat_id ? `${origin} · ${record.chat_id}` : origin;
  }

  protected untrustedLabel(source: UntrustedSource): string {
    return `${source.kind}: ${source.name}`;
  }

  protected trustLabel(row: EntrySource): string {
    return this.i18n.t(`memory.sources.trust.${row.trust}`);
  }
}
