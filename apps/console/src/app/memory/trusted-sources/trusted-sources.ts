import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { TRUSTED_SOURCE_KINDS, type TrustedSource, type TrustedSourceKind } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { MemoryApi } from '../memory-api';

/**
 * The owner's trusted sources: content from them (their own MCP server, a web domain, a Skill's files) no longer makes
 * memory, Skill or automation writes ask. Every change is saved at once (and audited by the server).
 */
@Component({
  selector: 'cc-trusted-sources',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule],
  templateUrl: './trusted-sources.html',
  styleUrl: './trusted-sources.scss',
})
export class TrustedSources {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(MemoryApi);

  protected readonly kinds = TRUSTED_SOURCE_KINDS;
  protected readonly sources = signal<TrustedSource[]>([]);
  protected readonly kind = signal<TrustedSourceKind>('mcp_server');
  protected readonly name = signal('');
  protected readonly error = signal<string | null>(null);
  protected readonly busy = signal(false);

  constructor() {
    void this.api.trustedSources().then(
      (answer) => this.sources.set(answer.sources),
      (err: unknown) => this.error.set(this.message(err)),
    );
  }

  protected kindLabel(kind: TrustedSourceKind): string {
    return this.i18n.t(`memory.trusted.kind.${kind}`);
  }

  protected placeholder(): string {
    return this.i18n.t(`memory.trusted.placeholder.${this.kind()}`);
  }

  protected add(): void {
    const name = this.name().trim().toLowerCase();
    if (name === '') return;
    void this.save([...this.sources(), { kind: this.kind(), name }], true);
  }

  protected remove(source: TrustedSource): void {
    void this.save(this.sources().filter((known) => known !== source), false);
  }

  protected onKind(event: Event): void {
    this.kind.set((event.target as HTMLSelectElement).value as TrustedSourceKind);
  }

  protected onName(event: Event): void {
    this.name.set((event.target as HTMLInputElement).value);
  }

  private async save(next: TrustedSource[], clearInput: boolean): Promise<void> {
    this.busy.set(true);
    try {
      this.sources.set((await this.api.saveTrustedSources(next)).sources);
      if (clearInput) this.name.set('');
      this.error.set(null);
    } catch (err) {
      this.error.set(this.message(err));
    } finally {
      this.busy.set(false);
    }
  }

  private message(err: unknown): string {
    const detail = (err as { error?: { detail?: unknown } })?.error?.detail;
    if (typeof detail === 'string') return detail;
    return err instanceof Error ? err.message : String(err);
  }
}
