/**
 * `/api/memory*`: MEMORY.md and SOUL.md with optimistic concurrency (a sha256 content hash read with GET must be
 * sent back with PUT; 409 when the file changed since), and the Dream history, revert and "run now".
 */
import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type {
  DreamRun,
  DreamRunListResponse,
  DreamTriggerResponse,
  MemoryDocumentResponse,
  MemoryEntriesResponse,
  MemoryEntryTrust,
  MemoryProvenanceRecord,
  MemoryProvenanceResponse,
  SoulDocumentResponse,
} from '@cashcode/contracts';
import { localIsoWithOffset } from '../common/local-iso-time';
import { formatEvent } from '../common/log-format';
import { DreamService } from './dream.service';
import { DreamReview } from './dream-review.service';
import { MemoryError } from './memory.errors';
import { DEFAULT_SOUL, MemoryDocuments, type MemoryDocument } from './memory-documents';
import { memoryEntryViews } from './memory-entry-trust';
import { PROVENANCE_FILE } from './memory-provenance';

/** sha256 of the text (UTF-8), lowercase hex. */
export function contentHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

@Injectable()
export class MemoryService {
  private readonly logger = new Logger(MemoryService.name);

  constructor(
    private readonly store: MemoryDocuments,
    private readonly dream: DreamService,
    private readonly review: DreamReview,
  ) {}

  async getLongTermMemory(): Promise<MemoryDocumentResponse> {
    return this.document(await this.store.readDocument('MEMORY.md'));
  }

  async updateLongTermMemory(content: string, hash: string): Promise<MemoryDocumentResponse> {
    return this.document(await this.replace('MEMORY.md', content, hash, 'memory_conflict'));
  }

  async getSoul(): Promise<SoulDocumentResponse> {
    return this.soul(await this.store.readDocument('SOUL.md'));
  }

  async updateSoul(content: string, hash: string): Promise<SoulDocumentResponse> {
    return this.soul(await this.replace('SOUL.md', content, hash, 'soul_conflict'));
  }

  async listDreams(limit: number): Promise<DreamRunListResponse> {
    return { runs: await this.dream.listRuns(limit) };
  }

  revertDream(id: string): Promise<DreamRun> {
    return this.dream.revert(id);
  }

  applyDream(id: string): Promise<DreamRun> {
    return this.review.apply(id);
  }

  runDream(): Promise<DreamTriggerResponse> {
    return this.dream.run('manual');
  }

  /** The owner marks a line of MEMORY.md as verified (a record in the provenance log); 404 when there is no such line. */
  async verifyEntry(entry: string): Promise<MemoryProvenanceRecord> {
    const wanted = entry.trim();
    const lines = (await this.store.readDocument('MEMORY.md')).split('\n').map((line) => line.trim());
    if (wanted === '' || !lines.includes(wanted)) throw new MemoryError('memory_entry_not_found');
    const record: MemoryProvenanceRecord = {
      at: localIsoWithOffset(new Date(), { millis: true }),
      origin: 'console',
      requested_by: 'owner',
      entry: wanted,
      untrusted_sources: [],
      verified: true,
    };
    await this.store.provenance.append([record]);
    this.logger.log(formatEvent('memory.entry.verified', { chars: wanted.length }));
    return record;
  }

  /**
   * A page of MEMORY.md's entries with their trust (memory-entry-trust.ts). A missing log while MEMORY.md has entries
   * is logged: every entry then has an unknown source, and new writes are recorded again.
   */
  async listEntries(offset: number, limit: number): Promise<MemoryEntriesResponse> {
    const [memory, log] = await Promise.all([this.store.readDocument('MEMORY.md'), this.store.provenance.readAll()]);
    const views = memoryEntryViews(memory, log.records);
    if (log.missing && views.length > 0) {
      this.logger.warn(formatEvent('memory.provenance.missing', { file: PROVENANCE_FILE, entries: views.length, shown_as: 'unknown' }));
    }
    const counts: Record<MemoryEntryTrust, number> = { verified: 0, trusted: 0, untrusted: 0, unknown: 0 };
    for (const view of views) counts[view.trust]++;
    return { entries: views.slice(offset, offset + limit), total: views.length, offset, limit, counts, unreadable: log.unreadable };
  }

  /** A page of MEMORY.md's provenance log, oldest first (openspec memory "Requirement: Memory provenance"). */
  listProvenance(offset: number, limit: number): Promise<MemoryProvenanceResponse> {
    return this.store.provenance.list(offset, limit);
  }

  private async replace(
    document: MemoryDocument,
    content: string,
    hash: string,
    conflict: 'memory_conflict' | 'soul_conflict',
  ): Promise<string> {
    const written = await this.store.updateDocument(
      document,
      (current) => {
        if (contentHash(current) !== hash) throw new MemoryError(conflict);
        return { content, result: content };
      },
      // the entries the owner adds in the console are the owner's own
      { provenance: { origin: 'console', requested_by: 'owner', untrusted_sources: [] } },
    );
    this.logger.log(formatEvent('memory.document.edited', { document, chars: content.length }));
    return written;
  }

  private document(content: string): MemoryDocumentResponse {
    return { content, hash: contentHash(content) };
  }

  private soul(content: string): SoulDocumentResponse {
    return { ...this.document(content), uses_default: content.trim() === '', default_content: DEFAULT_SOUL };
  }
}
