/**
 * Skills administration for the REST API (`/api/skills`) and for the callers that create or replace Skills on the
 * user's or the agent's behalf (agent_skill_manage, skill evolution): list, detail, content, validation, versions,
 * create, ZIP import, replace, enable/disable, delete, rollback and removal of invalid packages.
 *
 * Mutations are serialised (one at a time) and publish atomically through SkillStore; a rejected edit creates no
 * snapshot. No response contains an absolute host path: packages are named by their logical location
 * `skills/<source>/<name>`.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  SKILL_SOURCES,
  type DeleteInvalidSkillResponse,
  type SkillArchiveCandidate,
  type SkillAvailability,
  type SkillImportResponse,
  type SkillContentResponse,
  type SkillDetail,
  type SkillListResponse,
  type SkillRecord,
  type SkillRecordWithPath,
  type SkillReplaceResponse,
  type SkillSource,
  type SkillValidationResponse,
  type SkillVersionsResponse,
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
import { formatEvent } from '../common/log-format';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { ZIP_MAX_BYTES, extractSkillArchive, inspectSkillArchive } from './skill-archive';
import { SKILL_CATALOG, SkillCatalog } from './skill-catalog';
import { sanitizeStoreDiagnostic } from './skill-diagnostics';
import { errorName, isPlainObject, logicalPath, sha256 } from './skill-helpers';
import type { CatalogEntry } from './skill-record';
import { SEARCH_LIMIT_MAX } from './skill-search-index';
import { StagedPackage, epochSeconds, type SkillMeta } from './skill-publication';
import { isPlausibleVersion } from './skill-snapshots';
import { SkillStore } from './skill-store';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export const BODY_PREVIEW_CHARS = 4000;

export interface ListSkillsInput {
  source?: SkillSource;
  enabled?: boolean;
  availability?: SkillAvailability;
  query?: string;
  page: number;
  pageSize: number;
}

export interface CreateSkillInput {
  name: unknown;
  content: unknown;
  source: SkillSource;
  supportFiles?: unknown;
  enabled?: boolean;
  reason?: string;
}

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

@Injectable()
export class SkillsAdminService {
  private readonly logger = new Logger(SkillsAdminService.name);
  private mutations: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
  ) {}

  /** A catalog change in MCP (server added or removed) changes the `mcp:` availability of Skills. */
  @OnAppEvent(MCP_TOOLS_CHANGED_EVENT)
  async onMcpChanged(event: McpToolsChangedEvent): Promise<void> {
    if (event.reason !== 'catalog') return;
    try {
      await this.catalog.recomputeAvailability();
    } catch (error) {
      this.logger.warn(formatEvent('skill.availability.refresh_failed', { error: errorName(error) }));
    }
  }

  /** Runs one mutation at a time. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.mutations.then(task, task);
    this.mutations = run.catch(() => undefined);
    return run;
  }

  async list(input: ListSkillsInput): Promise<SkillListResponse> {
    await this.catalog.refresh('quick');
    let records: SkillRecord[];
    if (input.query !== undefined && input.query !== '') {
      records = this.catalog
        .search(input.query, { includeDisabled: true, limit: SEARCH_LIMIT_MAX })
        .map((hit) => hit.entry.record);
    } else {
      records = this.catalog.list().map((entry) => entry.record);
    }
    const filtered = records.filter(
      (record) =>
        (input.source === undefined || record.source === input.source) &&
        (input.enabled === undefined || record.enabled === input.enabled) &&
        (input.availability === undefined || record.availability === input.availability),
    );
    const start = (input.page - 1) * input.pageSize;
    return {
      items: filtered.slice(start, start + input.pageSize).map((record) => structuredClone(record)),
      total: filtered.length,
      page: input.page,
      page_size: input.pageSize,
      invalid: this.catalog.invalid(),
    };
  }

  async get(name: string): Promise<SkillDetail> {
    const entry = await this.freshEntry(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFound);
    const record = this.withPath(entry);
    let body = entry.pkg.body;
    const reread = await this.store.readPackage(entry.pkg.source, name);
    if (reread.ok) body = reread.pkg.body;
    else record.validation_errors = [this.sanitize(reread.error)];
    const chars = Array.from(body);
    return {
      ...record,
      body_preview: chars.slice(0, BODY_PREVIEW_CHARS).join('').trim(),
      body_truncated: chars.length > BODY_PREVIEW_CHARS,
      versions: entry.pkg.source === 'builtin' ? [] : await this.store.listVersions(entry.pkg.source, name),
    };
  }

  async content(name: string): Promise<SkillContentResponse> {
    if (!isValidSkillName(name)) throw new SkillError('validation', SKILL_MD_MESSAGES.invalidName, 'name');
    const entry = await this.freshEntry(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFoundNamed(name));
    return {
      name,
      display_name: entry.record.display_name,
      content: entry.pkg.content,
      hash: entry.pkg.hash,
      source: entry.pkg.source,
      mutable: entry.record.mutable,
    };
  }

  /** Validates the package on disk, or a draft SKILL.md for it when `draft` is given. */
  async validate(name: string, draft?: string): Promise<SkillValidationResponse> {
    const entry = await this.freshEntry(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFound);
    if (draft !== undefined) {
      const parsed = parseSkillMarkdown(draft, { expectedName: name });
      return parsed.ok ? { valid: true, name, hash: sha256(draft), errors: [] } : { valid: false, errors: [parsed.error] };
    }
    const result = await this.store.readPackage(entry.pkg.source, name);
    return result.ok
      ? { valid: true, name, hash: result.pkg.hash, errors: [] }
      : { valid: false, errors: [this.sanitize(result.error)] };
  }

  async versions(name: string): Promise<SkillVersionsResponse> {
    const entry = await this.freshEntry(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFound);
    const versions = entry.pkg.source === 'builtin' ? [] : await this.store.listVersions(entry.pkg.source, name);
    return { name, versions };
  }

  /** REST `POST /api/skills`, `agent_skill_manage` and skill evolution: a new package in a writable root. */
  create(input: CreateSkillInput): Promise<SkillRecordWithPath> {
    return this.exclusive(async () => {
      const name = input.name;
      if (typeof name !== 'string' || !isValidSkillName(name)) {
        throw new SkillError('validation', SKILL_MD_MESSAGES.invalidName, 'name');
      }
      if (typeof input.content !== 'string') throw new SkillError('validation', 'content must be a string', 'content');
      const parsed = parseSkillMarkdown(input.content, { expectedName: name });
      if (!parsed.ok) throw new SkillError('validation', parsed.error, 'content');
      if (input.source === 'builtin') throw new SkillError('permission', SKILL_MESSAGES.builtinReadOnly);
      await this.assertNameFree(name);
      const supportFiles = this.checkSupportFiles(input.supportFiles);
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
        const hash = await this.publishNew(staged, name);
        this.logger.log(formatEvent('skill.created', { name, source: input.source, hash: hash.slice(0, 12) }));
        return this.withPath(this.requireEntry(name));
      } catch (error) {
        throw this.asSkillError(error);
      } finally {
        await staged.discard();
      }
    });
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
        if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'file');
        names.push(manifest.name);
      }
      return await this.exclusive(async () => {
        for (const name of names) await this.assertNameFree(name, options.replaceBuiltin === true, true);
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
            await this.publishNew(stage, name, options.replaceBuiltin === true);
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
        const records = names.map((name) => structuredClone(this.requireEntry(name).record));
        return { ...(records[0] as SkillRecord), imported: records };
      });
    } catch (error) {
      throw this.asSkillError(error);
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

  /** REST `PUT /api/skills/{name}`: a rejected edit creates no snapshot. */
  replace(
    name: string,
    input: { content: unknown; supportFiles?: unknown; expectedHash?: string | null },
  ): Promise<SkillReplaceResponse> {
    return this.exclusive(async () => {
      const entry = await this.mutableEntry(name);
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
      const supportFiles = rebuild ? this.checkSupportFiles(input.supportFiles) : [];
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
        if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'content');
        const snapshot = await this.store.snapshot(source, name);
        await this.store.publishReplace(staged, name);
        await this.refreshAfter(source, name);
        this.logger.log(formatEvent('skill.replaced', { name, source, snapshot }));
        return { ...this.withPath(this.requireEntry(name)), snapshot };
      } catch (error) {
        throw this.asSkillError(error);
      } finally {
        await staged.discard();
      }
    });
  }

  /** REST `PATCH /api/skills/{name}/enabled`. */
  setEnabled(name: string, enabled: boolean): Promise<SkillRecordWithPath> {
    return this.exclusive(async () => {
      const entry = await this.mutableEntry(name);
      const source = entry.pkg.source;
      const meta: Record<string, unknown> = (await this.store.readMeta(source, name)) ?? {
        source,
        storage_version: 1,
        agentCreated: source === 'agent',
      };
      meta['enabled'] = enabled;
      meta['updated_at'] = epochSeconds();
      await this.store.writeMeta(source, name, meta);
      await this.refreshAfter(source, name);
      this.logger.log(formatEvent('skill.enabled_changed', { name, source, enabled }));
      return this.withPath(this.requireEntry(name));
    });
  }

  /** REST `DELETE /api/skills/{name}`: snapshot, then remove; a lower-precedence package becomes effective. */
  delete(name: string): Promise<void> {
    return this.exclusive(async () => {
      const entry = await this.mutableEntry(name);
      const source = entry.pkg.source;
      const snapshot = await this.store.snapshot(source, name);
      await this.store.remove(source, name);
      await this.refreshAfter(source, name);
      this.logger.log(formatEvent('skill.deleted', { name, source, snapshot }));
    });
  }

  /** REST `POST /api/skills/{name}/rollback/{version}`. */
  rollback(name: string, version: string): Promise<SkillRecordWithPath> {
    return this.exclusive(async () => {
      const entry = await this.mutableEntry(name);
      const source = entry.pkg.source;
      if (!isPlausibleVersion(version)) throw new SkillError('validation', SKILL_MESSAGES.invalidVersion, 'version');
      if (!(await this.store.snapshotExists(source, name, version))) {
        throw new SkillError('not_found', SKILL_MESSAGES.snapshotNotFound(version));
      }
      const staged = await this.store.stage(source);
      try {
        await this.store.copySnapshotInto(staged, source, name, version);
        const checked = await this.store.readStaged(staged, name);
        if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'version');
        const snapshot = await this.store.snapshot(source, name);
        await this.store.publishReplace(staged, name);
        await this.refreshAfter(source, name);
        this.logger.log(formatEvent('skill.rolled_back', { name, source, version, snapshot }));
        return this.withPath(this.requireEntry(name));
      } catch (error) {
        throw this.asSkillError(error);
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
    return this.exclusive(async () => {
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

  // ------------------------------------------------------------------------------------------------ helpers

  /** The effective entry after a quick refresh, re-read first when its package changed on disk. */
  private async freshEntry(name: string): Promise<CatalogEntry | undefined> {
    await this.catalog.refresh('quick');
    const entry = this.catalog.get(name);
    if (entry && (await this.catalog.changedOnDisk(entry.pkg.source, name))) {
      this.catalog.invalidate(entry.pkg.source, name);
      await this.catalog.refresh('quick');
      return this.catalog.get(name);
    }
    return entry;
  }

  private requireEntry(name: string): CatalogEntry {
    const entry = this.catalog.get(name);
    if (!entry) throw new SkillError('publication', SKILL_MESSAGES.didNotEnterCatalog);
    return entry;
  }

  private withPath(entry: CatalogEntry): SkillRecordWithPath {
    return { ...structuredClone(entry.record), path: logicalPath(entry.pkg.source, entry.record.name) };
  }

  /** The effective entry of a Skill that may be changed: 404 unknown, 403 built-in. */
  private async mutableEntry(name: string): Promise<CatalogEntry> {
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
  private async assertNameFree(name: string, allowBuiltin = false, importing = false): Promise<void> {
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

  /** `support_files`: an object of at most 64 package-relative paths → text of at most 200,000 bytes. */
  private checkSupportFiles(value: unknown): [string, string][] {
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

  /** Validates the staged package, renames it into place, refreshes and verifies the catalog; returns the hash. */
  private async publishNew(staged: StagedPackage, name: string, allowBuiltin = false): Promise<string> {
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

  private async refreshAfter(source: SkillSource, name: string): Promise<void> {
    this.catalog.invalidate(source, name);
    await this.catalog.refresh();
  }

  private sanitize(message: string): string {
    return sanitizeStoreDiagnostic(this.store, message);
  }

  private asSkillError(error: unknown): SkillError {
    if (error instanceof SkillError) return error;
    this.logger.error(formatEvent('skill.mutation.failed', { error: errorName(error) }));
    return new SkillError('publication', SKILL_MESSAGES.publicationFailed);
  }
}
