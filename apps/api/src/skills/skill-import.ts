/**
 * ZIP import of Skills (REST `POST /api/skills/import`; openspec skills "Requirement: ZIP import"): the upload is
 * checked (present, `.zip`/`.skill`, at most ZIP_MAX_BYTES), the packages to import are chosen (the archive's single
 * package, or the `select`ed ones), each is extracted into its own staging directory and validated, and then, in the
 * changes lane, all of them are published or none (those already published are removed again on a failure).
 */
import type { Logger } from '@nestjs/common';
import type { SkillArchiveCandidate, SkillImportResponse, SkillRecord } from '@cashcode/contracts';
import { isValidSkillName } from '@cashcode/skill-format';
import { formatEvent } from '../common/log-format';
import type { SkillAdminSteps } from './skill-admin-steps';
import { ZIP_MAX_BYTES, extractSkillArchive, inspectSkillArchive } from './skill-archive';
import type { SkillCatalog } from './skill-catalog';
import { epochSeconds, type StagedPackage } from './skill-publication';
import type { SkillStore } from './skill-store';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export interface ImportOptions {
  /** names of the packages to import from an archive holding several */
  select?: readonly string[];
  /** a package named like a built-in shadows it instead of being refused */
  replaceBuiltin?: boolean;
}

/** `.skill` is the Agent Skills packager's name for the same ZIP */
export const IMPORT_EXTENSIONS = ['.zip', '.skill'] as const;
const SELECT_MAX = 64;

export interface UploadedZip {
  originalname: string;
  buffer: Buffer;
  size: number;
}

export class SkillImport {
  private readonly store: SkillStore;
  private readonly catalog: SkillCatalog;
  private readonly logger: Logger;

  constructor(private readonly steps: SkillAdminSteps) {
    this.store = steps.store;
    this.catalog = steps.catalog;
    this.logger = steps.logger;
  }

  /**
   * REST `POST /api/skills/import`: always into the user root, enabled. A `.zip` or `.skill` archive; `select` names
   * the packages to import from an archive holding several (all or none are published); `replaceBuiltin` lets a
   * package shadow the built-in of its name (openspec skills "Requirement: ZIP import").
   */
  async importZip(file: UploadedZip | undefined, options: ImportOptions = {}): Promise<SkillImportResponse> {
    if (!file) throw new SkillError('validation', SKILL_MESSAGES.zipMissing, 'file', { extensions: { reason: 'zip_missing' } });
    const filename = file.originalname.trim().toLowerCase();
    if (!IMPORT_EXTENSIONS.some((ext) => filename.endsWith(ext))) {
      throw new SkillError('validation', SKILL_MESSAGES.notZip, 'file', { extensions: { reason: 'zip_not_zip' } });
    }
    if (file.size > ZIP_MAX_BYTES || file.buffer.length > ZIP_MAX_BYTES) {
      throw new SkillError('validation', SKILL_MESSAGES.zipTooLarge, 'file', {
        extensions: { reason: 'zip_too_large', limit: ZIP_MAX_BYTES },
      });
    }
    const select = options.select ?? [];
    const started = performance.now();
    const roots = await this.importRoots(file.buffer, select);
    const staged: StagedPackage[] = [];
    try {
      const names: string[] = [];
      for (const root of roots) {
        const stage = await this.store.stage('user', 'import');
        staged.push(stage);
        const { manifest } = await extractSkillArchive(file.buffer, stage, root ?? undefined);
        const checked = await this.store.readStaged(stage, manifest.name);
        if (!checked.ok) throw new SkillError('validation', this.steps.sanitize(checked.error), 'file');
        names.push(manifest.name);
      }
      return await this.steps.exclusive(async () => {
        for (const name of names) await this.steps.assertNameFree(name, options.replaceBuiltin === true, true);
        const published: string[] = [];
        try {
          for (const [index, stage] of staged.entries()) {
            const name = names[index] as string;
            await stage.writeMeta({
              source: 'user',
              enabled: true,
              storage_version: 1,
              updated_at: epochSeconds(),
              agentCreated: false,
            });
            await this.steps.publishNew(stage, name, options.replaceBuiltin === true);
            published.push(name);
          }
        } catch (error) {
          // all or nothing: the packages already published by this import are removed again
          for (const name of published) await this.store.remove('user', name).catch(() => undefined);
          if (published.length > 0) {
            for (const name of published) this.catalog.invalidate('user', name);
            await this.catalog.refresh().catch(() => undefined);
          }
          throw error;
        }
        this.logger.log(
          formatEvent('skill.imported', {
            name: names.join(','),
            bytes: file.buffer.length,
            duration_ms: Math.round(performance.now() - started),
          }),
        );
        const records = names.map((name) => structuredClone(this.steps.requireEntry(name).record));
        return { ...(records[0] as SkillRecord), imported: records };
      });
    } catch (error) {
      throw this.steps.asSkillError(error);
    } finally {
      for (const stage of staged) await stage.discard();
    }
  }

  /**
   * The archive folders to import: `[null]` for an archive holding one package the old way, the selected packages'
   * folders, or a 422 `skill_archive_multiple` listing the packages when a selection is needed.
   */
  private async importRoots(buffer: Buffer, select: readonly string[]): Promise<(string | null)[]> {
    if (select.length > SELECT_MAX || select.some((name) => typeof name !== 'string' || !isValidSkillName(name))) {
      throw new SkillError('validation', SKILL_MESSAGES.selectInvalid, 'select');
    }
    const inspected = await inspectSkillArchive(buffer);
    const named = inspected.candidates.filter((candidate) => candidate.name !== null);
    const names = named.map((candidate) => candidate.name as string);
    if (select.length === 0) {
      if (inspected.single !== null) return [null];
      if (inspected.candidates.length === 1 && !(inspected.candidates[0] as SkillArchiveCandidate).path.includes('/')) {
        return [null]; // one wrapper folder with strays: extraction reports the layout error
      }
      throw new SkillError('validation', SKILL_MESSAGES.multipleSkills(names), 'select', {
        problemCode: 'skill_archive_multiple',
        extensions: { skills: inspected.candidates },
      });
    }
    const roots: string[] = [];
    for (const name of new Set(select)) {
      const found = named.filter((candidate) => candidate.name === name);
      if (found.length !== 1) {
        throw new SkillError('validation', SKILL_MESSAGES.selectUnknown(name, names), 'select', {
          problemCode: 'skill_archive_multiple',
          extensions: { skills: inspected.candidates },
        });
      }
      roots.push((found[0] as SkillArchiveCandidate).path);
    }
    return roots;
  }
}
