/**
 * The owner's trusted sources: `<data>/approvals/trusted-sources.json` (`{"version": 1, "sources": [{kind, name}]}`,
 * atomic writes, mode 0600). It sits with the tool policies under `<data>/approvals/`, which the model's file tools can
 * never write (agent/tools/workspace-paths.ts, state roots). A missing file trusts nothing; a file that cannot be read
 * trusts nothing either (the safe side) and is named in an error log line. Every change is recorded in the approvals
 * audit (`tool: trusted_sources`) before it takes effect.
 */
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { isErrorCode, isRecord, type TrustedSource, type UntrustedSource } from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { SerialQueue } from '../common/keyed-queue';
import { localIsoWithOffset } from '../common/local-iso-time';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApprovalAuditLog } from './approval-audit';
import { parseTrustedSource, untrustedSourcesThatCount } from './trusted-sources';

export const TRUSTED_SOURCES_FILE = 'trusted-sources.json';

const same = (a: TrustedSource, b: TrustedSource) => a.kind === b.kind && a.name === b.name;

@Injectable()
export class TrustedSourceStore implements OnModuleInit {
  private readonly logger = new Logger(TrustedSourceStore.name);
  readonly path: string;
  private sources: TrustedSource[] = [];
  private readonly writes = new SerialQueue();

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'dataDir'>,
    private readonly audit: ApprovalAuditLog,
  ) {
    this.path = join(config.dataDir, 'approvals', TRUSTED_SOURCES_FILE);
  }

  async onModuleInit(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return;
      throw error;
    }
    try {
      const raw: unknown = JSON.parse(text);
      const list = isRecord(raw) && Array.isArray(raw['sources']) ? raw['sources'] : null;
      const parsed = (list ?? []).map(parseTrustedSource);
      if (list === null || parsed.some((source) => source === null)) throw new Error('not a trusted-sources file');
      this.sources = dedupe(parsed as TrustedSource[]);
    } catch {
      this.sources = [];
      this.logger.error(formatEvent('approvals.trusted_sources.unreadable', { file: this.path, action: 'trust_nothing' }));
    }
  }

  /** The trusted sources (copies). */
  get current(): TrustedSource[] {
    return this.sources.map((source) => ({ ...source }));
  }

  /** Of a turn's untrusted sources, those no trusted source covers (trusted-sources.ts). */
  stillUntrusted(sources: readonly UntrustedSource[] | undefined): UntrustedSource[] {
    return untrustedSourcesThatCount(sources, this.sources);
  }

  /** Replaces the list: each source added or removed is audited, then the file is written, then the list changes. */
  replace(next: readonly TrustedSource[]): Promise<TrustedSource[]> {
    return this.writes.run(async () => {
      const wanted = dedupe(next);
      const added = wanted.filter((source) => !this.sources.some((known) => same(known, source)));
      const removed = this.sources.filter((source) => !wanted.some((kept) => same(kept, source)));
      const at = localIsoWithOffset(new Date(), { millis: true });
      for (const [action, source] of [...added.map((s) => ['trust', s] as const), ...removed.map((s) => ['untrust', s] as const)]) {
        await this.audit.append({
          at,
          chat_id: '',
          call_id: '',
          tool: 'trusted_sources',
          risk: 'memory_write',
          decision: action === 'trust' ? 'allow_always' : 'deny',
          by: 'user',
          preview: `${source.kind} ${JSON.stringify(source.name)}`,
          trusted_source: { action, kind: source.kind, name: source.name },
        });
      }
      await mkdirPrivate(dirname(this.path));
      await writeJsonAtomic(this.path, { version: 1, sources: wanted }, { mode: 0o600 });
      this.sources = wanted;
      this.logger.log(formatEvent('approvals.trusted_sources.changed', { added: added.length, removed: removed.length, total: wanted.length }));
      return this.current;
    });
  }
}

function dedupe(sources: readonly TrustedSource[]): TrustedSource[] {
  const out: TrustedSource[] = [];
  for (const source of sources) if (!out.some((known) => same(known, source))) out.push({ kind: source.kind, name: source.name });
  return out;
}
