/**
 * Skills administration for the REST API (`/api/skills`) and for the callers that create or replace Skills on the
 * user's or the agent's behalf (agent_skill_manage, skill evolution). The reads are here: list, detail, content,
 * validation, versions. The changes are SkillMutations (`skill-mutations.ts`: create, replace, enable/disable,
 * delete, rollback, removal of invalid packages) and SkillImport (`skill-import.ts`: ZIP import), sharing the steps
 * of SkillAdminSteps (`skill-admin-steps.ts`): one change at a time, atomic publication through SkillStore.
 *
 * No response contains an absolute host path: packages are named by their logical location `skills/<source>/<name>`.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type DeleteInvalidSkillResponse,
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
import { SKILL_MD_MESSAGES, isValidSkillName, parseSkillMarkdown } from '@cashcode/skill-format';
import { formatEvent } from '../common/log-format';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { SkillAdminSteps } from './skill-admin-steps';
import { SKILL_CATALOG, SkillCatalog } from './skill-catalog';
import { errorName, sha256 } from './skill-helpers';
import { SkillImport, type ImportOptions, type UploadedZip } from './skill-import';
import { SkillMutations, type CreateSkillInput } from './skill-mutations';
import type { CatalogEntry } from './skill-record';
import { SEARCH_LIMIT_MAX } from './skill-search-index';
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

@Injectable()
export class SkillsAdminService {
  private readonly logger = new Logger(SkillsAdminService.name);
  private readonly steps: SkillAdminSteps;
  private readonly mutations: SkillMutations;
  private readonly imports: SkillImport;

  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
  ) {
    this.steps = new SkillAdminSteps(store, catalog, this.logger);
    this.mutations = new SkillMutations(this.steps);
    this.imports = new SkillImport(this.steps);
  }

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
    const record = this.steps.withPath(entry);
    let body = entry.pkg.body;
    const reread = await this.store.readPackage(entry.pkg.source, name);
    if (reread.ok) body = reread.pkg.body;
    else record.validation_errors = [this.steps.sanitize(reread.error)];
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
      : { valid: false, errors: [this.steps.sanitize(result.error)] };
  }

  async versions(name: string): Promise<SkillVersionsResponse> {
    const entry = await this.freshEntry(name);
    if (!entry) throw new SkillError('not_found', SKILL_MESSAGES.notFound);
    const versions = entry.pkg.source === 'builtin' ? [] : await this.store.listVersions(entry.pkg.source, name);
    return { name, versions };
  }

  // ------------------------------------------------------------------------------------------------ changes

  /** REST `POST /api/skills`, `agent_skill_manage` and skill evolution: a new package in a writable root. */
  create(input: CreateSkillInput): Promise<SkillRecordWithPath> {
    return this.mutations.create(input);
  }

  /** REST `POST /api/skills/import`: always into the user root, enabled (see skill-import.ts). */
  importZip(file: UploadedZip | undefined, options: ImportOptions = {}): Promise<SkillImportResponse> {
    return this.imports.importZip(file, options);
  }

  /** REST `PUT /api/skills/{name}`: a rejected edit creates no snapshot. */
  replace(
    name: string,
    input: { content: unknown; supportFiles?: unknown; expectedHash?: string | null },
  ): Promise<SkillReplaceResponse> {
    return this.mutations.replace(name, input);
  }

  /** REST `PATCH /api/skills/{name}/enabled`. */
  setEnabled(name: string, enabled: boolean): Promise<SkillRecordWithPath> {
    return this.mutations.setEnabled(name, enabled);
  }

  /** REST `DELETE /api/skills/{name}`: snapshot, then remove; a lower-precedence package becomes effective. */
  delete(name: string): Promise<void> {
    return this.mutations.delete(name);
  }

  /** REST `POST /api/skills/{name}/rollback/{version}`. */
  rollback(name: string, version: string): Promise<SkillRecordWithPath> {
    return this.mutations.rollback(name, version);
  }

  /** REST `DELETE /api/skills/invalid/{source}/{directory}`: an invalid package is moved to the snapshots, never deleted outright. */
  deleteInvalid(sourceInput: string, directory: string): Promise<DeleteInvalidSkillResponse> {
    return this.mutations.deleteInvalid(sourceInput, directory);
  }

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
}
