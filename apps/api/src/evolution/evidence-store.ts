/**
 * Evidence files `<dataDir>/skill-evolution/evidence/<epoch ms>-<8 hex>.json` (openspec skill-evolution): written
 * atomically, at most SKILL_EVOLUTION_MAX_EVIDENCE kept (the oldest are deleted first). An index id → fingerprint is
 * built from the directory on first use and kept up to date by this store, the only writer.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SkillEvolutionEvidence } from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EVIDENCE_ID_PATTERN, parseEvidence } from './evidence';

const FILE_PATTERN = /^(\d{13}-[0-9a-f]{8})\.json$/;

@Injectable()
export class EvidenceStore {
  private readonly logger = new Logger(EvidenceStore.name);
  private readonly dir: string;
  private readonly maxEvidence: number;
  /** id → fingerprint, ordered oldest first once loaded */
  private index: Map<string, string> | null = null;
  private loading: Promise<Map<string, string>> | null = null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.dir = join(config.skillEvolutionDir, 'evidence');
    this.maxEvidence = config.skillEvolutionMaxEvidence;
  }

  /** Writes a record, then deletes the oldest records beyond the cap. */
  async add(evidence: SkillEvolutionEvidence): Promise<void> {
    const index = await this.load();
    await mkdirPrivate(this.dir);
    await writeJsonAtomic(this.fileOf(evidence.id), evidence);
    index.set(evidence.id, evidence.fingerprint);
    await this.prune(index);
  }

  /** Ids of the records with this fingerprint, oldest first. */
  async idsWithFingerprint(fingerprint: string): Promise<string[]> {
    const index = await this.load();
    return [...index.entries()].filter(([, fp]) => fp === fingerprint)
      .map(([id]) => id)
      .sort();
  }

  /** The records with these ids that still exist and parse, in the order given. */
  async readMany(ids: readonly string[]): Promise<SkillEvolutionEvidence[]> {
    const records: SkillEvolutionEvidence[] = [];
    for (const id of ids) {
      const record = await this.read(id);
      if (record) records.push(record);
    }
    return records;
  }

  async read(id: string): Promise<SkillEvolutionEvidence | null> {
    if (!EVIDENCE_ID_PATTERN.test(id)) return null;
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(id), 'utf8');
    } catch {
      return null;
    }
    try {
      const record = parseEvidence(JSON.parse(text));
      return record && record.id === id ? record : null;
    } catch {
      return null;
    }
  }

  private fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  private load(): Promise<Map<string, string>> {
    if (this.index) return Promise.resolve(this.index);
    this.loading ??= this.scan().then((index) => {
      this.index = index;
      this.loading = null;
      return index;
    });
    return this.loading;
  }

  private async scan(): Promise<Map<string, string>> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch {
      return new Map();
    }
    const ids = names.flatMap((name) => FILE_PATTERN.exec(name)?.[1] ?? []).sort();
    const index = new Map<string, string>();
    let unreadable = 0;
    for (const id of ids) {
      const record = await this.read(id);
      if (record) index.set(id, record.fingerprint);
      else unreadable++;
    }
    if (unreadable > 0) this.logger.warn(formatEvent('skill_evolution.evidence.unreadable', { count: unreadable }));
    return index;
  }

  private async prune(index: Map<string, string>): Promise<void> {
    const excess = index.size - this.maxEvidence;
    if (excess <= 0) return;
    const oldest = [...index.keys()].sort().slice(0, excess);
    for (const id of oldest) {
      await fs.rm(this.fileOf(id), { force: true });
      index.delete(id);
    }
    this.logger.debug(formatEvent('skill_evolution.evidence.pruned', { count: oldest.length }));
  }
}
