/**
 * Changes to the Skills on the owner's or the agent's behalf (REST, agent_skill_manage, skill evolution): create,
 * replace, enable/disable, delete, rollback and the removal of an invalid package. Each runs in the changes lane of
 * SkillAdminSteps and publishes atomically through SkillStore; a rejected edit creates no snapshot, and a replace,
 * delete or rollback snapshots the package first.
 */
import {
  SKILL_SOURCES,
  type DeleteInvalidSkillResponse,
  type SkillRecordWithPath,
  type SkillReplaceResponse,
  type SkillSource,
} from '@cashcode/contracts';
import {
  SKILL_FILE,
  SKILL_MD_MESSAGES,
  SUPPORT_FILES_MAX,
  SUPPORT_FILE_MAX_BYTES,
  checkSupportPath,
  isValidSkillName,
  parseSkillMarkdown,
  utf8ByteLength,
} from '@cashcode/skill-format';
import type { Logger } from '@nestjs/common';
import { formatEvent } from '../common/log-format';
import type { SkillAdminSteps } from './skill-admin-steps';
import type { SkillCatalog } from './skill-catalog';
import { errorName, isPlainObject, sha256 } from './skill-helpers';
import { epochSeconds, type SkillMeta } from './skill-publication';
import { isPlausibleVersion } from './skill-snapshots';
import type { SkillStore } from './skill-store';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export interface CreateSkillInput {
  name: unknown;
  content: unknown;
  source: SkillSource;
  supportFiles?: unknown;
  enabled?: boolean;
  reason?: string;
}

export class SkillMutations {
  private readonly store: SkillStore;
  private readonly catalog: SkillCatalog;
  private readonly logger: Logger;

  constructor(private readonly steps: SkillAdminSteps) {
    this.store = steps.store;
    this.catalog = steps.catalog;
    this.logger = steps.logger;
  }

  /** REST `POST /api/skills`, `agent_skill_manage` and skill evolution: a new package in a writable root. */
  create(input: CreateSkillInput): Promise<SkillRecordWithPath> {
    return this.steps.exclusive(async () => {
      const name = input.name;
      if (typeof name !== 'string' || !isValidSkillName(name)) {
        throw new SkillError('validation', SKILL_MD_MESSAGES.invalidName, 'name');
      }
      if (typeof input.content !== 'string') throw new SkillError('validation', 'content must be a string', 'content');
      const parsed = parseSkillMarkdown(input.content, { expectedName: name });
      if (!parsed.ok) throw new SkillError('validation', parsed.error, 'content');
      if (input.source === 'builtin') throw new SkillError('permission', SKILL_MESSAGES.builtinReadOnly);
      await this.steps.assertNameFree(name);
      const supportFiles = checkSupportFiles(input.supportFiles);
      const meta: SkillMeta = {
        source: input.source,
        enabled: input.enabled !== false,
        storage_version: 1,
        updated_at: epochSeconds(),
        agentCreated: input.source === 'agent',
      };
      const reason = input.reason?.trim();
      if (reason) meta.creation_reason = reason;
      const staged = await this.store.stage(input.source);
      try {
        await staged.writeFile(SKILL_FILE, input.content);
        for (const [rel, text] of supportFiles) await staged.writeFile(rel, text);
        await staged.writeMeta(meta);
        const hash = await this.steps.publishNew(staged, name);
        this.logger.log(formatEvent('skill.created', { name, source: input.source, hash: hash.slice(0, 12) }));
        return this.steps.withPath(this.steps.requireEntry(name));
      } catch (error) {
        throw this.steps.asSkillError(error);
      } finally {
        await staged.discard();
      }
    });
  }

  /** REST `PUT /api/skills/{name}`: a rejected edit creates no snapshot. */
  replace(
    name: string,
    input: { content: unknown; supportFiles?: unknown; expectedHash?: string | null },
  ): Promise<SkillReplaceResponse> {
    return this.steps.exclusive(async () => {
      const entry = await this.steps.mutableEntry(name);
      const source = entry.pkg.source;
      const current = await this.store.readSkillFile(source, name);
      const currentHash = current ? sha256(current) : entry.pkg.hash;
      if (typeof input.expectedHash === 'string' && input.expectedHash !== currentHash) {
        throw new SkillError('conflict', SKILL_MESSAGES.changed);
      }
      if (typeof input.content !== 'string') throw new SkillError('validation', 'content must be a string', 'content');
      const parsed = parseSkillMarkdown(input.content, { expectedName: name });
      if (!parsed.ok) throw new SkillError('validation', parsed.error, 'content');
      const rebuild = input.supportFiles !== undefined && input.supportFiles !== null;
      const supportFiles = rebuild ? checkSupportFiles(input.supportFiles) : [];
      const staged = await this.store.stage(source);
      try {
        if (rebuild) {
          const previous = await this.store.readMeta(source, name);
          await staged.writeFile(SKILL_FILE, input.content);
          for (const [rel, text] of supportFiles) await staged.writeFile(rel, text);
          await staged.writeMeta({
            source,
            enabled: previous === null || !('enabled' in previous) ? true : entry.pkg.enabled,
            storage_version: 1,
            updated_at: epochSeconds(),
            agentCreated: source === 'agent',
          });
        } else {
          await this.store.copyInto(staged, source, name);
          await staged.removeFile(SKILL_FILE);
          await staged.writeFile(SKILL_FILE, input.content);
        }
        const checked = await this.store.readStaged(staged, name);
        if (!checked.ok) throw new SkillError('validation', this.steps.sanitize(checked.error), 'content');
        const snapshot = await this.store.snapshot(source, name);
        await this.store.publishReplace(staged, name);
        await this.steps.refreshAfter(source, name);
        this.logger.log(formatEvent('skill.replaced', { name, source, snapshot }));
        return { ...this.steps.withPath(this.steps.requireEntry(name)), snapshot };
      } catch (error) {
        throw this.steps.asSkillError(error);
      } finally {
        await staged.discard();
      }
    });
  }

  /** REST `PATCH /api/skills/{name}/enabled`. */
  setEnabled(name: string, enabled: boolean): Promise<SkillRecordWithPath> {
    return this.steps.exclusive(async () => {
      const entry = await this.steps.mutableEntry(name);
      const source = entry.pkg.source;
      const meta: Record<string, unknown> = (await this.store.readMeta(source, name)) ?? {
        source,
        storage_version: 1,
        agentCreated: source === 'agent',
      };
      meta['enabled'] = enabled;
      meta['updated_at'] = epochSeconds();
      await this.store.writeMeta(source, name, meta);
      await this.steps.refreshAfter(source, name);
      this.logger.log(formatEvent('skill.enabled_changed', { name, source, enabled }));
      return this.steps.withPath(this.steps.requireEntry(name));
    });
  }

  /** REST `DELETE /api/skills/{name}`: snapshot, then remove; a lower-precedence package becomes effective. */
  delete(name: string): Promise<void> {
    return this.steps.exclusive(async () => {
      const entry = await this.steps.mutableEntry(name);
      const source = entry.pkg.source;
      const snapshot = await this.store.snapshot(source, name);
      await this.store.remove(source, name);
      await this.steps.refreshAfter(source, name);
      this.logger.log(formatEvent('skill.deleted', { name, source, snapshot }));
    });
  }

  /** REST `POST /api/skills/{name}/rollback/{version}`. */
  rollback(name: string, version: string): Promise<SkillRecordWithPath> {
    return this.steps.exclusive(async () => {
      const entry = await this.steps.mutableEntry(name);
      const source = entry.pkg.source;
      if (!isPlausibleVersion(version)) throw new SkillError('validation', SKILL_MESSAGES.invalidVersion, 'version');
      if (!(await this.store.snapshotExists(source, name, version))) {
        throw new SkillError('not_found', SKILL_MESSAGES.snapshotNotFound(version));
      }
      const staged = await this.store.stage(source);
      try {
        await this.store.copySnapshotInto(staged, source, name, version);
        const checked = await this.store.readStaged(staged, name);
        if (!checked.ok) throw new SkillError('validation', this.steps.sanitize(checked.error), 'version');
        const snapshot = await this.store.snapshot(source, name);
        await this.store.publishReplace(staged, name);
        await this.steps.refreshAfter(source, name);
        this.logger.log(formatEvent('skill.rolled_back', { name, source, version, snapshot }));
        return this.steps.withPath(this.steps.requireEntry(name));
      } catch (error) {
        throw this.steps.asSkillError(error);
      } finally {
        await staged.discard();
      }
    });
  }

  /** REST `DELETE /api/skills/invalid/{source}/{directory}`: an invalid package is moved to the snapshots, never deleted outright. */
  deleteInvalid(sourceInput: string, directory: string): Promise<DeleteInvalidSkillResponse> {
    if (!(SKILL_SOURCES as readonly string[]).includes(sourceInput)) {
      throw new SkillError('validation', SKILL_MESSAGES.invalidSource, 'source');
    }
    const source = sourceInput as SkillSource;
    if (source === 'builtin') throw new SkillError('permission', SKILL_MESSAGES.builtinReadOnly);
    if (directory === '' || directory === '.' || directory === '..' || directory.includes('/') || directory.includes('\\')) {
      throw new SkillError('validation', SKILL_MESSAGES.invalidSelector, 'directory');
    }
    return this.steps.exclusive(async () => {
      // the diagnostics as last reported (a package fixed on disk since then is re-validated below → 409)
      if (!this.catalog.ready) await this.catalog.refresh();
      const match = this.catalog
        .invalidPackages()
        .find((item) => item.source === source && (item.directory === directory || item.key === `${source}:${directory}`));
      if (!match || !(await this.store.isDirectChildDirectory(source, match.directory))) {
        throw new SkillError('not_found', SKILL_MESSAGES.invalidNotFound);
      }
      const recheck = await this.store.readPackage(source, match.directory);
      if (recheck.ok) throw new SkillError('conflict', SKILL_MESSAGES.invalidIsValid);
      const packageId = sha256(`${source}:${match.directory}`).slice(0, 16);
      const moved = await this.store.moveInvalid(source, match.directory, packageId);
      try {
        this.catalog.invalidate(source, match.directory);
        await this.catalog.refresh();
      } catch (error) {
        await moved.undo().catch(() => undefined);
        this.logger.error(formatEvent('skill.invalid.delete_failed', { source, error: errorName(error) }));
        throw new SkillError('publication', SKILL_MESSAGES.publicationFailed);
      }
      this.logger.log(formatEvent('skill.invalid.deleted', { source, snapshot: moved.snapshot }));
      return { source, directory: match.directory, snapshot: moved.snapshot };
    });
  }
}

/** `support_files`: an object of at most 64 package-relative paths → text of at most 200,000 bytes. */
function checkSupportFiles(value: unknown): [string, string][] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value) || Object.keys(value).length > SUPPORT_FILES_MAX) {
    throw new SkillError('validation', SKILL_MESSAGES.supportFilesShape, 'support_files');
  }
  const out: [string, string][] = [];
  const seen = new Set<string>();
  for (const [rel, text] of Object.entries(value)) {
    if (typeof text !== 'string') throw new SkillError('validation', SKILL_MESSAGES.supportFilesShape, 'support_files');
    const checked = checkSupportPath(rel);
    if (!checked.ok) throw new SkillError('validation', checked.error, 'support_files');
    const key = checked.path.toLowerCase();
    if (seen.has(key)) throw new SkillError('validation', `duplicate support path: ${checked.path}`, 'support_files');
    seen.add(key);
    if (utf8ByteLength(text) > SUPPORT_FILE_MAX_BYTES) {
      throw new SkillError('validation', `supporting file is too large: ${checked.path}`, 'support_files');
    }
    out.push([checked.path, text]);
  }
  // a file may not also be a directory of another file
  for (const [rel] of out) {
    if (out.some(([other]) => other.toLowerCase().startsWith(`${rel.toLowerCase()}/`))) {
      throw new SkillError('validation', `support path is both a file and a directory: ${rel}`, 'support_files');
    }
  }
  return out;
}
