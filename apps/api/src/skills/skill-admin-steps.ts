/**
 * The steps every change to the Skills shares (SkillsAdminService's create, import, replace, enable, delete, rollback
 * and removal of invalid packages): changes run one at a time; a name is checked free in every root; a new package is
 * validated, renamed into place and verified in the catalog (removed again when it did not enter it); any unexpected
 * failure becomes a `publication` SkillError whose message names no host path.
 */
import type { Logger } from '@nestjs/common';
import { SKILL_SOURCES, type SkillRecordWithPath, type SkillSource } from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { KeyedQueue } from '../common/keyed-queue';
import type { SkillCatalog } from './skill-catalog';
import { sanitizeStoreDiagnostic } from './skill-diagnostics';
import { errorName, logicalPath } from './skill-helpers';
import type { StagedPackage } from './skill-publication';
import type { CatalogEntry } from './skill-record';
import type { SkillStore } from './skill-store';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export class SkillAdminSteps {
  /** one lane for every change (a single key: all changes are serialised) */
  private readonly lane = new KeyedQueue<'changes'>();

  constructor(
    readonly store: SkillStore,
    readonly catalog: SkillCatalog,
    /** SkillsAdminService's logger: the changes log under its name */
    readonly logger: Logger,
  ) {}

  /** Runs one change at a time (a failed change does not stop the next). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.lane.run('changes', task);
  }

  /** The catalog entry of a Skill just changed (a `publication` error when it is not in the catalog). */
  requireEntry(name: string): CatalogEntry {
    const entry = this.catalog.get(name);
    if (!entry) throw new SkillError('publication', SKILL_MESSAGES.didNotEnterCatalog);
    return entry;
  }

  /** A copy of the entry's record with its logical path `skills/<source>/<name>`. */
  withPath(entry: CatalogEntry): SkillRecordWithPath {
    return { ...structuredClone(entry.record), path: logicalPath(entry.pkg.source, entry.record.name) };
  }

  /** The effective entry of a Skill that may be changed: 404 unknown, 403 built-in. */
  async mutableEntry(name: string): Promise<CatalogEntry> {
    await this.catalog.refresh();
    const entry = this.catalog.get(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFoundNamed(name));
    if (entry.pkg.source === 'builtin') throw new SkillError('permission', SKILL_MESSAGES.builtinReadOnly);
    return entry;
  }

  /**
   * 409 when a directory of that name (valid or not) exists in any root; with `allowBuiltin` a built-in of that name
   * is no conflict (the new package shadows it). On import, a conflict with the built-in only says how to replace it.
   */
  async assertNameFree(name: string, allowBuiltin = false, importing = false): Promise<void> {
    const taken: SkillSource[] = [];
    for (const source of SKILL_SOURCES) {
      if (allowBuiltin && source === 'builtin') continue;
      if (await this.store.directoryExists(source, name)) taken.push(source);
    }
    if (importing && taken.length === 1 && taken[0] === 'builtin') {
      throw new SkillError('conflict', SKILL_MESSAGES.existsBuiltin(name), undefined, {
        extensions: { replace_builtin: true },
      });
    }
    if (taken.length > 0) throw new SkillError('conflict', SKILL_MESSAGES.exists(taken, name));
  }


  /** Validates the staged package, renames it into place, refreshes and verifies the catalog; returns the hash. */
  async publishNew(staged: StagedPackage, name: string, allowBuiltin = false): Promise<string> {
    const checked = await this.store.readStaged(staged, name);
    if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'content');
    let published: boolean;
    try {
      published = await this.store.publishNew(staged, name);
    } catch (error) {
      this.logger.error(formatEvent('skill.publish.failed', { error: errorName(error) }));
      throw new SkillError('publication', SKILL_MESSAGES.publicationFailed);
    }
    if (!published) await this.assertNameFree(name, allowBuiltin);
    if (!published) throw new SkillError('conflict', SKILL_MESSAGES.exists([staged.source], name));
    await this.refreshAfter(staged.source, name);
    const entry = this.catalog.get(name);
    if (!entry || entry.pkg.source !== staged.source || entry.pkg.hash !== checked.pkg.hash) {
      await this.store.remove(staged.source, name).catch(() => undefined);
      this.catalog.invalidate(staged.source, name);
      await this.catalog.refresh().catch(() => undefined);
      throw new SkillError('publication', SKILL_MESSAGES.didNotEnterCatalog);
    }
    return checked.pkg.hash;
  }

  /** Re-reads one changed package and refreshes the catalog. */
  async refreshAfter(source: SkillSource, name: string): Promise<void> {
    this.catalog.invalidate(source, name);
    await this.catalog.refresh();
  }

  /** A package diagnostic with the store's roots replaced by their logical names. */
  sanitize(message: string): string {
    return sanitizeStoreDiagnostic(this.store, message);
  }

  /** A SkillError as it is; anything else is logged by name and becomes a `publication` error. */
  asSkillError(error: unknown): SkillError {
    if (error instanceof SkillError) return error;
    this.logger.error(formatEvent('skill.mutation.failed', { error: errorName(error) }));
    return new SkillError('publication', SKILL_MESSAGES.publicationFailed);
  }
}
