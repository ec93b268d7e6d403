/**
 * The owner's grants of Skills' pre-approvals: `<data>/approvals/skill-grants.json` (atomic writes, mode 0600, pretty
 * JSON) `{"version": 1, "grants": [{name, source, hash, allowed_tools, granted_at}]}`, at most one grant per Skill
 * package (`<source>/<name>`). `hash` is the package content hash (skill-package-hash.ts) the owner approved;
 * `allowed_tools` the entries they saw.
 *
 * The file is written only by the REST grant/revoke routes and by the Skill mutations that drop a grant; no model tool
 * reaches it (it lies outside the workspace, and the data directory is hidden from exec's sandbox). A missing file is
 * no grants. A file that cannot be read as grants is logged and treated as no grants (fail closed: nothing is
 * pre-approved), never a failed start; entries that are not valid are skipped and logged. Writes are serialised and
 * the state in memory changes only after the file is on disk.
 */
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isErrorCode, isRecord, SKILL_SOURCES, type SkillSource } from '@cashcode/contracts';
import { isValidSkillName } from '@cashcode/skill-format';
import { writeJsonAtomic } from '../common/atomic-file';
import { KeyedQueue } from '../common/keyed-queue';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export const SKILL_GRANTS_FILE = 'skill-grants.json';
/** a SKILL.md has at most 80,000 bytes; no sane list of entries is longer than this */
export const GRANT_MAX_ENTRIES = 256;
export const GRANT_ENTRY_MAX_CHARS = 1024;
const HASH_PATTERN = /^[0-9a-f]{64}$/;

export interface SkillGrant {
  name: string;
  source: SkillSource;
  /** package content hash the owner approved */
  hash: string;
  /** the `allowed-tools` entries the owner saw */
  allowed_tools: string[];
  /** ISO 8601 */
  granted_at: string;
}

function grantKey(source: SkillSource, name: string): string {
  return `${source}/${name}`;
}

/** A valid grant, or null. */
export function parseGrant(value: unknown): SkillGrant | null {
  if (!isRecord(value)) return null;
  const { name, source, hash, allowed_tools: tools, granted_at: at } = value;
  if (typeof name !== 'string' || !isValidSkillName(name)) return null;
  if (typeof source !== 'string' || !(SKILL_SOURCES as readonly string[]).includes(source)) return null;
  if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) return null;
  if (typeof at !== 'string' || at.length > 64 || Number.isNaN(Date.parse(at))) return null;
  if (!Array.isArray(tools) || tools.length === 0 || tools.length > GRANT_MAX_ENTRIES) return null;
  if (!tools.every((tool) => typeof tool === 'string' && tool.length > 0 && tool.length <= GRANT_ENTRY_MAX_CHARS)) return null;
  return { name, source: source as SkillSource, hash, allowed_tools: [...(tools as string[])], granted_at: at };
}

@Injectable()
export class SkillGrantStore {
  readonly path: string;
  private readonly logger = new Logger(SkillGrantStore.name);
  private grants = new Map<string, SkillGrant>();
  /** the file's writes, one at a time */
  private readonly writes = new KeyedQueue<'file'>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.path = join(config.dataDir, 'approvals', SKILL_GRANTS_FILE);
  }

  /** Reads the file: missing → no grants; unreadable or not grants → no grants, logged. Never throws. */
  async load(): Promise<void> {
    this.grants = new Map();
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) {
        this.logger.error(formatEvent('skill.grants.unreadable', { error: (error as NodeJS.ErrnoException).code ?? 'error' }));
      }
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      raw = null;
    }
    if (!isRecord(raw) || raw['version'] !== 1 || !Array.isArray(raw['grants'])) {
      this.logger.error(formatEvent('skill.grants.invalid_file', { detail: 'not a grants file; no Skill pre-approval is granted' }));
      return;
    }
    let skipped = 0;
    for (const item of raw['grants'] as unknown[]) {
      const grant = parseGrant(item);
      if (grant === null) skipped++;
      else this.grants.set(grantKey(grant.source, grant.name), grant);
    }
    if (skipped > 0) this.logger.warn(formatEvent('skill.grants.invalid_entries', { skipped }));
  }

  get(source: SkillSource, name: string): SkillGrant | undefined {
    return this.grants.get(grantKey(source, name));
  }

  /** Whether the package `<source>/<name>` holds a grant for exactly this content hash (hot path of every call). */
  matches(source: SkillSource, name: string, hash: string): boolean {
    return this.grants.get(grantKey(source, name))?.hash === hash;
  }

  list(): SkillGrant[] {
    return [...this.grants.values()].map((grant) => ({ ...grant, allowed_tools: [...grant.allowed_tools] }));
  }

  /** Stores (or replaces) the grant of a package; resolves once it is on disk. */
  put(grant: SkillGrant): Promise<void> {
    return this.change((draft) => {
      draft.set(grantKey(grant.source, grant.name), { ...grant, allowed_tools: [...grant.allowed_tools] });
    }).then(() => undefined);
  }

  /** Removes the grant of a package; resolves to the removed grant (null when there was none, nothing written). */
  async remove(source: SkillSource, name: string): Promise<SkillGrant | null> {
    let removed: SkillGrant | null = null;
    await this.change((draft) => {
      removed = draft.get(grantKey(source, name)) ?? null;
      draft.delete(grantKey(source, name));
    });
    return removed;
  }

  private change(apply: (draft: Map<string, SkillGrant>) => void): Promise<void> {
    return this.writes.run('file', async () => {
      const draft = new Map(this.grants);
      apply(draft);
      if (draft.size === this.grants.size && [...draft].every(([key, value]) => this.grants.get(key) === value)) return;
      await mkdirPrivate(dirname(this.path));
      const grants = [...draft.values()].sort((a, b) => (grantKey(a.source, a.name) < grantKey(b.source, b.name) ? -1 : 1));
      await writeJsonAtomic(this.path, { version: 1, grants }, { mode: 0o600 });
      this.grants = draft;
    });
  }
}
