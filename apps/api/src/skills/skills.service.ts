/**
 * Skills: the REST rules of spec §3.5 / §11.6–§11.9, ZIP import (§11.7), the skill tools (§11.10), explicit
 * selections and prompt hints for a chat turn and the `allowed-tools` pre-approvals
 * (the tools a loaded Skill lists run without asking in that turn; other tools are not restricted).
 *
 * Mutations are serialised (one at a time) and publish atomically through SkillStore; a rejected edit creates no
 * snapshot (§16.10). No response or tool result contains an absolute host path (§16.16): packages are named by their
 * logical location `skills/<source>/<name>`.
 */
import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import {
  SKILL_SOURCES,
  formatSkillReceipt,
  type DeleteInvalidSkillResponse,
  type LoadedSkillReceipt,
  type SkillAvailability,
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
import type { ToolContext, ToolResult } from '../agent/agent-tool';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { MCP_TOOL_PREFIX, ToolRegistry } from '../agent/tool-registry';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { McpService } from '../mcp/mcp.service';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../mcp/mcp.types';
import { MemoryStore } from '../memory/memory-store';
import type { ActivatedSkillEntry } from '../memory/memory.types';
import { ZIP_MAX_BYTES, extractSkillArchive } from './skill-archive';
import { SEARCH_LIMIT_MAX, SkillCatalog, boundText, sanitizeDiagnostic, type CatalogEntry } from './skill-catalog';
import { SkillStore, StagedPackage, epochSeconds, isPlausibleVersion, type SkillMeta } from './skill-store';
import {
  AgentSkillManageTool,
  MANAGE_REASON_MAX_CHARS,
  SkillLoadTool,
  SkillReadResourceTool,
  SkillSearchTool,
  pythonJson,
} from './skill-tools';
import { ApprovalsService } from '../approvals/approvals.service';
import { addAllowedTools, emptyPreApprovals, type PreApprovals } from '../approvals/skill-pre-approvals';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export const SKILL_CATALOG = Symbol('SKILL_CATALOG');

export const BODY_PREVIEW_CHARS = 4000;
export const ACTIVATED_SKILLS_CAPACITY = 12;
export const ACTIVATED_DESCRIPTION_CHARS = 160;
export const RECENT_SKILLS_MAX_CHARS = 1800;
const PACKAGE_FILES_LISTED = 50;

export const SKILL_USAGE_SECTION =
  '## Skill usage\n' +
  'Skills are local packages of instructions for specific tasks. When a task may match one, search with ' +
  'skill_search and load the best match with skill_load (exact name) before following it; read its supporting files ' +
  'with skill_read_resource. A loaded Skill body is valid for the current turn only: load it again in a later turn. ' +
  'When the user explicitly asks to create a Skill, load skill-creator first and create it only with ' +
  'agent_skill_manage; never create or edit Skill files with write_file, edit_file, exec, curl or ad hoc HTTP ' +
  'requests. Claim that a Skill was created only when agent_skill_manage returned "success": true; if it failed, ' +
  'fix the reported problem and retry only through agent_skill_manage.';

export const RECENT_SKILLS_HEADER =
  '## Recently activated Skills\nThese are hints only. Call skill_load with the exact name before relying on full instructions.';

/** What a chat turn gets for its explicit Skill selections (spec §5.2 step 7b). */
export type ExplicitSkillsResult =
  | {
      ok: true;
      /** the second system message, or null when nothing was selected */
      systemMessage: string | null;
      /** assistant receipts to persist with the turn, in selection order */
      receipts: string[];
      loaded: LoadedSkillReceipt[];
    }
  | { ok: false; detail: string };

export interface TurnSkillContext {
  chatId: string;
  turnId: string;
  signal: AbortSignal;
}

interface LoadedInTurn {
  name: string;
  hash: string;
  version: number;
  /** the manifest's `allowed-tools` entries as written (pre-approved while loaded), null when absent */
  allowedTools: string[] | null;
}

interface TurnSkills {
  turnId: string;
  active: boolean;
  loaded: Map<string, LoadedInTurn>;
}

type LoadOutcome =
  | { kind: 'error'; payload: Record<string, unknown> }
  | { kind: 'already'; name: string; receipt: string }
  | { kind: 'loaded'; name: string; receipt: string; model: string; body: string; receiptData: LoadedSkillReceipt };

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

export interface UploadedZip {
  originalname: string;
  buffer: Buffer;
  size: number;
}

/** A legacy leading `@name` selection (spec §5.2 step 5). */
const LEGACY_MENTION = /^@([a-z0-9][a-z0-9._-]{0,63})(?:\s+|$)/;

/**
 * The explicit Skill selection of a message (spec §5.2 step 5): `mentioned_skills` names plus a legacy leading
 * `@name`, de-duplicated in order; with a leading `@name` the task text is the rest of the message (left-trimmed).
 */
export function explicitSkillSelection(
  content: string,
  mentioned: readonly { name: string }[] | undefined,
): { names: string[]; taskText: string } {
  const names = (mentioned ?? []).map((row) => row.name.trim());
  let taskText = content;
  const match = LEGACY_MENTION.exec(content);
  if (match) {
    names.push(match[1] as string);
    taskText = content.slice(match[0].length).trimStart();
  }
  return { names: [...new Set(names)], taskText };
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function logicalPath(source: SkillSource, name: string): string {
  return `skills/${source}/${name}`;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

@Injectable()
export class SkillsService implements OnModuleInit {
  private readonly logger = new Logger(SkillsService.name);
  private mutations: Promise<unknown> = Promise.resolve();
  private readonly turns = new Map<string, TurnSkills>();

  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
    private readonly registry: ToolRegistry,
    private readonly memory: MemoryStore,
    private readonly mcp: McpService,
    private readonly prompt: SystemPromptBuilder,
    private readonly approvals: ApprovalsService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.store.prepare();
    this.registry.registerMeta(new SkillSearchTool(this));
    this.registry.registerMeta(new SkillLoadTool(this));
    this.registry.registerMeta(new SkillReadResourceTool(this));
    this.registry.register(new AgentSkillManageTool(this));
    this.approvals.setPreApprovalSource({ preApprovals: (chatId) => this.preApprovals(chatId) });
    this.prompt.registerSection({ name: 'skills.usage', order: 100, render: () => SKILL_USAGE_SECTION });
    this.prompt.registerSection({
      name: 'skills.recent',
      order: 110,
      render: ({ chatId }) => this.recentSkillsSummary(chatId),
    });
    await this.catalog.refresh();
  }

  @OnEvent(MCP_TOOLS_CHANGED_EVENT)
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

  // ================================================================================================ REST

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

  /** REST `POST /api/skills` and `agent_skill_manage` (spec §11.6). */
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

  /** REST `POST /api/skills/import` (spec §11.7): always into the user root, enabled. */
  async importZip(file: UploadedZip | undefined): Promise<SkillRecord> {
    if (!file) throw new SkillError('validation', SKILL_MESSAGES.zipMissing, 'file');
    if (!file.originalname.trim().toLowerCase().endsWith('.zip')) {
      throw new SkillError('validation', SKILL_MESSAGES.notZip, 'file');
    }
    if (file.size > ZIP_MAX_BYTES || file.buffer.length > ZIP_MAX_BYTES) {
      throw new SkillError('validation', SKILL_MESSAGES.zipTooLarge, 'file');
    }
    const started = performance.now();
    const staged = await this.store.stage('user', 'import');
    try {
      const { manifest } = await extractSkillArchive(file.buffer, staged);
      const name = manifest.name;
      const checked = await this.store.readStaged(staged, name);
      if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'file');
      return await this.exclusive(async () => {
        await this.assertNameFree(name);
        await staged.writeMeta({
          source: 'user',
          enabled: true,
          storage_version: 1,
          updated_at: epochSeconds(),
          agentCreated: false,
        });
        await this.publishNew(staged, name);
        this.logger.log(
          formatEvent('skill.imported', {
            name,
            bytes: file.buffer.length,
            duration_ms: Math.round(performance.now() - started),
          }),
        );
        const entry = this.requireEntry(name);
        return structuredClone(entry.record);
      });
    } catch (error) {
      throw this.asSkillError(error);
    } finally {
      await staged.discard();
    }
  }

  /** REST `PUT /api/skills/{name}` (spec §3.5, §16.10: a rejected edit creates no snapshot). */
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

  /** REST `DELETE /api/skills/invalid/{source}/{directory}` (spec §11.9). */
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

  // ================================================================================================ chat turn

  /**
   * Loads the explicitly selected Skills of a turn before the model runs (spec §5.2 step 7b). A failure is the turn's
   * error: `Unable to load @<name>: <the skill_load error JSON>`.
   */
  async prepareExplicitSkills(names: readonly string[], ctx: TurnSkillContext): Promise<ExplicitSkillsResult> {
    this.beginTurn(ctx.chatId, ctx.turnId);
    const bodies: string[] = [];
    const receipts: string[] = [];
    const loaded: LoadedSkillReceipt[] = [];
    for (const name of [...new Set(names)]) {
      const outcome = await this.loadSkill(name, ctx);
      if (outcome.kind === 'error') return { ok: false, detail: `Unable to load @${name}: ${pythonJson(outcome.payload, true)}` };
      if (outcome.kind === 'loaded') {
        bodies.push(outcome.model);
        receipts.push(outcome.receipt);
        loaded.push(outcome.receiptData);
      }
    }
    return {
      ok: true,
      systemMessage: bodies.length > 0 ? `The user explicitly selected these Skills:\n\n${bodies.join('\n\n---\n\n')}` : null,
      receipts,
      loaded,
    };
  }

  /** The system prompt parts of spec §5.3: the `## Skill usage` paragraph and the recently-activated summary. */
  async skillPromptSections(chatId: string): Promise<string[]> {
    const summary = await this.recentSkillsSummary(chatId);
    return summary ? [SKILL_USAGE_SECTION, summary] : [SKILL_USAGE_SECTION];
  }

  /** Starts the per-turn Skill context of a chat (loaded Skills, `allowed-tools`). */
  beginTurn(chatId: string, turnId: string): void {
    const existing = this.turns.get(chatId);
    if (existing && existing.turnId === turnId) {
      existing.active = true;
      return;
    }
    this.turns.set(chatId, { turnId, active: true, loaded: new Map() });
  }

  /** Ends the per-turn context: bodies and `allowed-tools` never carry over to the next turn. */
  endTurn(chatId: string, turnId?: string): void {
    const state = this.turns.get(chatId);
    if (state && (turnId === undefined || state.turnId === turnId)) this.turns.delete(chatId);
  }

  /**
   * The tools pre-approved in a chat's current turn: the `allowed-tools` of every Skill loaded in it (Agent Skills
   * meaning: they run without asking; nothing else is restricted). Null when no loaded Skill declares any.
   */
  preApprovals(chatId: string): PreApprovals | null {
    const state = this.turns.get(chatId);
    if (!state || !state.active) return null;
    let pre: PreApprovals | null = null;
    for (const skill of state.loaded.values()) {
      if (skill.allowedTools === null) continue;
      pre = addAllowedTools(pre ?? emptyPreApprovals(), skill.allowedTools);
    }
    return pre;
  }

  private turnState(chatId: string, turnId: string): TurnSkills {
    let state = this.turns.get(chatId);
    if (!state || state.turnId !== turnId) {
      state = { turnId, active: true, loaded: new Map() };
      this.turns.set(chatId, state);
    }
    return state;
  }

  private async recentSkillsSummary(chatId: string): Promise<string | null> {
    const activated = (await this.memory.getChat(chatId)).metadata.activated_skills;
    if (!isPlainObject(activated)) return null;
    const entries = Object.entries(activated)
      .filter((pair): pair is [string, ActivatedSkillEntry] => isPlainObject(pair[1]))
      .sort(([, a], [, b]) => (Number(b.last_used) || 0) - (Number(a.last_used) || 0));
    let block = RECENT_SKILLS_HEADER;
    let lines = 0;
    for (const [name, stored] of entries) {
      const entry = this.catalog.get(name);
      if (!entry || !entry.pkg.enabled) continue;
      const stale = typeof stored.hash === 'string' && stored.hash !== entry.pkg.hash ? ' (stale; reload required)' : '';
      const description = boundText(entry.pkg.manifest.description.replace(/\s+/g, ' '), ACTIVATED_DESCRIPTION_CHARS);
      const line = `\n- ${name}: ${description}${stale}`;
      if (block.length + line.length > RECENT_SKILLS_MAX_CHARS) break;
      block += line;
      lines++;
    }
    return lines > 0 ? block : null;
  }

  // ================================================================================================ skill tools

  /** skill_search: enabled Skills, records without requires/optional, with a 4-decimal score. */
  searchForModel(query: string, limit: number): Promise<Record<string, unknown>[]> {
    return Promise.resolve(
      this.catalog.search(query, { includeDisabled: false, limit }).map((hit) => {
        const { requires: _requires, optional: _optional, ...rest } = hit.entry.record;
        return { ...rest, score: Math.round(hit.score * 10_000) / 10_000 };
      }),
    );
  }

  /** skill_load (spec §11.10) with its three projections. */
  async loadForModel(name: string, ctx: ToolContext): Promise<ToolResult> {
    const outcome = await this.loadSkill(name, ctx);
    switch (outcome.kind) {
      case 'error': {
        const text = pythonJson(outcome.payload, true);
        return { model: text, public: text, persisted: text, ok: false };
      }
      case 'already': {
        const text = `${outcome.receipt} already_loaded=true`;
        return { model: text, public: `Skill already loaded: ${outcome.name}`, persisted: text };
      }
      case 'loaded':
        return { model: outcome.model, public: `Loaded Skill: ${outcome.name}`, persisted: outcome.receipt };
    }
  }

  private async loadSkill(rawName: string, ctx: Pick<ToolContext, 'chatId' | 'turnId' | 'signal'>): Promise<LoadOutcome> {
    const name = rawName.trim();
    await this.catalog.refresh('quick');
    const entry = this.catalog.get(name);
    if (!entry) {
      const suggestions = name === '' ? [] : this.catalog.search(name, { includeDisabled: false, limit: 3 }).map((h) => h.entry.record.name);
      return { kind: 'error', payload: { error: 'skill_not_found', name, suggestions } };
    }
    if (!entry.pkg.enabled) return { kind: 'error', payload: { error: 'skill_disabled', name } };

    // the package is re-read from disk (the body and requirements in force now); the catalog follows a change
    const reread = await this.store.readPackage(entry.pkg.source, name);
    if (!reread.ok || reread.pkg.hash !== entry.pkg.hash) {
      this.catalog.invalidate(entry.pkg.source, name);
      await this.catalog.refresh();
    }
    if (!reread.ok) return { kind: 'error', payload: { error: 'invalid_skill', detail: this.sanitize(reread.error) } };
    const pkg = reread.pkg;
    if (!pkg.enabled) return { kind: 'error', payload: { error: 'skill_disabled', name } };
    const availability = await this.catalog.availabilityOf(pkg);
    const blocking = availability.missing.filter((item) => !item.startsWith('mcp:'));
    if (blocking.length > 0) return { kind: 'error', payload: { error: 'missing_dependency', name, missing: blocking } };

    // required MCP servers: connected now, their tools activated for this chat (visible from the next iteration)
    const requires = pkg.manifest.requires;
    const servers = [...requires.mcp_servers];
    const configured = new Set(this.mcp.list().map((server) => server.name));
    for (const tool of requires.tools) {
      if (!tool.startsWith(MCP_TOOL_PREFIX) || this.registry.has(tool)) continue;
      const owner = [...configured]
        .filter((server) => tool.startsWith(`${MCP_TOOL_PREFIX}${server}_`))
        .sort((a, b) => b.length - a.length)[0];
      if (owner && !servers.includes(owner)) servers.push(owner);
    }
    for (const server of servers) {
      const result = await this.mcp.prepareServer(ctx.chatId, server, ctx.signal);
      if (result.trimStart().startsWith('Error')) {
        return { kind: 'error', payload: { error: 'mcp_prepare_failed', name, server } };
      }
    }
    const receiptData: LoadedSkillReceipt = { name, version: pkg.manifest.version, hash: pkg.hash };
    const receipt = formatSkillReceipt(receiptData);
    const state = this.turnState(ctx.chatId, ctx.turnId);
    const previous = state.loaded.get(name);
    if (previous && previous.hash === pkg.hash) return { kind: 'already', name, receipt };
    const allowedTools = pkg.manifest.allowed_tools ? [...pkg.manifest.allowed_tools] : null;
    state.loaded.set(name, { name, hash: pkg.hash, version: pkg.manifest.version, allowedTools });
    await this.recordActivation(ctx.chatId, name, pkg.manifest.description, pkg.manifest.version, pkg.hash);

    const lines = [
      receipt,
      `Skill package: ${logicalPath(pkg.source, name)} (read its files with skill_read_resource using package-relative paths)`,
    ];
    if (pkg.files.length > 0) {
      const listed = pkg.files.slice(0, PACKAGE_FILES_LISTED).join(', ');
      const more = pkg.files.length > PACKAGE_FILES_LISTED ? `, … (${pkg.files.length - PACKAGE_FILES_LISTED} more)` : '';
      lines.push(`Package files: ${listed}${more}`);
    }
    lines.push(
      `Optional dependencies (not started): ${pythonJson({
        tools: pkg.manifest.optional.tools,
        mcp_servers: pkg.manifest.optional.mcp_servers,
      })}`,
    );
    if (allowedTools && allowedTools.length > 0) {
      lines.push(`Pre-approved while this Skill is loaded (these run without asking the user): ${allowedTools.join(', ')}`);
    }
    const model = `${lines.join('\n')}\n\n${pkg.body}`;
    this.logger.log(
      formatEvent('skill.loaded', { name, source: pkg.source, hash: pkg.hash.slice(0, 12) }),
      logIds({ chatId: ctx.chatId, turnId: ctx.turnId }),
    );
    return { kind: 'loaded', name, receipt, model, body: pkg.body, receiptData };
  }

  /** activated_skills LRU (capacity 12, most recent last) in the chat's metadata.json (spec §11.11). */
  private async recordActivation(
    chatId: string,
    name: string,
    description: string,
    version: number,
    hash: string,
  ): Promise<void> {
    try {
      const state = await this.memory.getChat(chatId);
      const current = isPlainObject(state.metadata.activated_skills) ? state.metadata.activated_skills : {};
      const map = new Map(Object.entries(current));
      map.delete(name);
      map.set(name, {
        description: boundText(description, ACTIVATED_DESCRIPTION_CHARS),
        version: String(version),
        hash,
        last_used: epochSeconds(),
      });
      const ordered = [...map.entries()].sort(([, a], [, b]) => (Number(a.last_used) || 0) - (Number(b.last_used) || 0));
      state.metadata.activated_skills = Object.fromEntries(ordered.slice(-ACTIVATED_SKILLS_CAPACITY));
      await this.memory.saveMetadata(chatId, state.metadata);
    } catch (error) {
      this.logger.warn(formatEvent('skill.activation.save_failed', { error: errorName(error) }), logIds({ chatId }));
    }
  }

  /** skill_read_resource (spec §11.10). */
  async readResourceForModel(name: string, rel: string, ctx: ToolContext): Promise<ToolResult | string> {
    const state = this.turns.get(ctx.chatId);
    const loaded = state && state.turnId === ctx.turnId ? state.loaded.get(name) : undefined;
    const entry = this.catalog.get(name);
    if (!loaded || !entry || entry.pkg.hash !== loaded.hash) return 'Error: load the Skill before reading its resources';
    const checked = checkSupportPath(rel);
    if (!checked.ok) return `Error: ${checked.error}`;
    const data = await this.store.readResource(entry.pkg.source, name, checked.path);
    if (!data) return 'Error: resource not found or too large';
    const receipt = `[Skill resource read: ${name}/${checked.path}]`;
    return { model: `${receipt}\n\n${data.toString('utf8')}`, public: receipt, persisted: receipt };
  }

  /** agent_skill_manage (spec §11.10): creates an agent Skill; never throws. */
  async manageForModel(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const fail = (code: string, detail: string) => ({
      success: false,
      action: 'create',
      code,
      detail: boundText(this.sanitize(detail), 240),
    });
    if (args['action'] !== 'create') return fail('unsupported_action', 'action must be create');
    const reason = args['reason'];
    if (reason !== undefined && reason !== null && (typeof reason !== 'string' || Array.from(reason).length > MANAGE_REASON_MAX_CHARS)) {
      return fail('validation_error', `reason must be a string of at most ${MANAGE_REASON_MAX_CHARS} characters`);
    }
    const supportFiles = args['support_files'];
    if (supportFiles !== undefined && supportFiles !== null) {
      if (!isPlainObject(supportFiles) || Object.keys(supportFiles).length > SUPPORT_FILES_MAX) {
        return fail('validation_error', SKILL_MESSAGES.supportFilesShape);
      }
      if (Object.values(supportFiles).some((value) => typeof value !== 'string')) {
        return fail('validation_error', SKILL_MESSAGES.supportFilesShape);
      }
    }
    try {
      const record = await this.create({
        name: args['name'],
        content: args['content'],
        source: 'agent',
        supportFiles: supportFiles ?? undefined,
        enabled: true,
        reason: typeof reason === 'string' ? reason : undefined,
      });
      return {
        success: true,
        action: 'create',
        name: record.name,
        display_name: record.display_name,
        hash: record.hash,
        source: 'agent',
        enabled: true,
      };
    } catch (error) {
      if (error instanceof SkillError) {
        switch (error.code) {
          case 'validation':
            return fail('validation_error', error.message);
          case 'conflict':
            return fail('conflict', error.message);
          case 'permission':
            return fail('permission_denied', error.message);
          case 'not_found':
          case 'publication':
            return fail('publication_failed', error.message);
        }
      }
      this.logger.error(formatEvent('skill.manage.failed', { error: errorName(error) }));
      return fail('publication_failed', SKILL_MESSAGES.publicationFailed);
    }
  }

  // ================================================================================================ helpers

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

  /** 409 when a directory of that name (valid or not) exists in any root. */
  private async assertNameFree(name: string): Promise<void> {
    const taken: SkillSource[] = [];
    for (const source of SKILL_SOURCES) if (await this.store.directoryExists(source, name)) taken.push(source);
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
  private async publishNew(staged: StagedPackage, name: string): Promise<string> {
    const checked = await this.store.readStaged(staged, name);
    if (!checked.ok) throw new SkillError('validation', this.sanitize(checked.error), 'content');
    let published: boolean;
    try {
      published = await this.store.publishNew(staged, name);
    } catch (error) {
      this.logger.error(formatEvent('skill.publish.failed', { error: errorName(error) }));
      throw new SkillError('publication', SKILL_MESSAGES.publicationFailed);
    }
    if (!published) await this.assertNameFree(name);
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
    const roots = this.store.roots;
    return sanitizeDiagnostic(message, [roots.builtin, roots.user, roots.agent, roots.snapshots]);
  }

  private asSkillError(error: unknown): SkillError {
    if (error instanceof SkillError) return error;
    this.logger.error(formatEvent('skill.mutation.failed', { error: errorName(error) }));
    return new SkillError('publication', SKILL_MESSAGES.publicationFailed);
  }
}
