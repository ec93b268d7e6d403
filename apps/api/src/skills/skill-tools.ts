/**
 * The skill tools the model sees and their back-ends: `skill_search`, `skill_load`, `skill_read_resource` (always
 * visible meta tools) and `agent_skill_manage` (main registry). This file holds the tool schemas, the argument checks
 * and the exact result formats (Python-style JSON spacing, three projections); loading into a turn is
 * SkillTurnService's job and creating a package SkillsAdminService's.
 */
import { Logger } from '@nestjs/common';
import { SUPPORT_FILES_MAX, checkSupportPath } from '@cashcode/skill-format';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent/agent-tool';
import { formatEvent } from '../common/log-format';
import { pythonJson } from './python-json';
import { RESOURCE_HEAD_READ_BYTES, describeBinaryResource, textHead, textResourceHead } from './skill-resource-kind';
import type { SkillCatalog } from './skill-catalog';
import { sanitizeStoreDiagnostic } from './skill-diagnostics';
import { boundText, errorName, isPlainObject } from './skill-helpers';
import type { SkillStore } from './skill-store';
import type { SkillTurnService } from './skill-turn.service';
import type { SkillGrantsService } from './skill-grants.service';
import type { SkillsAdminService } from './skills-admin.service';
import { SKILL_MESSAGES, SkillError } from './skills.errors';

export const SKILL_SEARCH_TOOL = 'skill_search';
export const SKILL_LOAD_TOOL = 'skill_load';
export const SKILL_READ_RESOURCE_TOOL = 'skill_read_resource';
export const AGENT_SKILL_MANAGE_TOOL = 'agent_skill_manage';

export const SKILL_SEARCH_DEFAULT_LIMIT = 8;
export const SKILL_SEARCH_MAX_LIMIT = 20;
export const MANAGE_REASON_MAX_CHARS = 500;

function schema(properties: Record<string, unknown>, required: string[], additionalProperties = false): JsonSchemaObject {
  return { type: 'object', properties, required, additionalProperties };
}

function asString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export class SkillSearchTool implements AgentTool {
  readonly name = SKILL_SEARCH_TOOL;
  readonly description =
    'Search the local Skills (reusable instructions for specific tasks) by keywords. Returns matching enabled Skills ' +
    'with their name, description and availability. Load one with skill_load before following it.';
  readonly parameters = schema(
    {
      query: { type: 'string', description: 'keywords describing the task' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: SKILL_SEARCH_MAX_LIMIT,
        default: SKILL_SEARCH_DEFAULT_LIMIT,
        description: 'maximum number of results',
      },
    },
    ['query'],
  );
  readonly readOnly = true;

  constructor(private readonly catalog: SkillCatalog) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    const query = asString(args['query']) ?? '';
    if (query.trim() === '') return pythonJson({ skills: [], error: 'query is required' });
    const rawLimit = args['limit'];
    const limit =
      typeof rawLimit === 'number' && Number.isFinite(rawLimit)
        ? Math.min(SKILL_SEARCH_MAX_LIMIT, Math.max(1, Math.floor(rawLimit)))
        : SKILL_SEARCH_DEFAULT_LIMIT;
    // enabled Skills; records without requires/optional, with a 4-decimal score
    const hits = this.catalog.search(query, { includeDisabled: false, limit }).map((hit) => {
      const { requires: _requires, optional: _optional, ...rest } = hit.entry.record;
      return { ...rest, score: Math.round(hit.score * 10_000) / 10_000 };
    });
    return pythonJson({ query, skills: hits });
  }
}

export class SkillLoadTool implements AgentTool {
  readonly name = SKILL_LOAD_TOOL;
  readonly description =
    'Load a Skill by its exact name to get its full instructions for the current turn. Required MCP servers are ' +
    'connected and their tools become available. Bodies are valid for the current turn only.';
  readonly parameters = schema({ name: { type: 'string', description: 'the exact Skill name' } }, ['name']);
  readonly readOnly = false;

  constructor(private readonly turns: SkillTurnService) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const name = (asString(args['name']) ?? '').trim();
    const outcome = await this.turns.loadSkill(name, ctx);
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
}

export class SkillReadResourceTool implements AgentTool {
  readonly name = SKILL_READ_RESOURCE_TOOL;
  readonly description =
    'Read a supporting file (e.g. references/guide.md, templates/chart.html) of a Skill loaded in this turn. ' +
    'The path is relative to the Skill package. Text files return their content; binary files (PDF, fonts, images, ' +
    'archives …) return their type and size only.';
  readonly parameters = schema(
    {
      name: { type: 'string', description: 'the Skill name' },
      path: { type: 'string', description: 'package-relative path of the file' },
    },
    ['name', 'path'],
  );
  readonly readOnly = true;

  constructor(
    private readonly turns: SkillTurnService,
    private readonly catalog: SkillCatalog,
    private readonly store: SkillStore,
  ) {}

  /** Offered once the chat has loaded a Skill. */
  appliesTo(scope: { chatId: string }): boolean {
    return this.turns.hasLoadedSkills(scope.chatId);
  }

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const name = (asString(args['name']) ?? '').trim();
    const rel = asString(args['path']) ?? '';
    const loaded = this.turns.loadedInTurn(ctx.chatId, ctx.turnId, name);
    const entry = this.catalog.get(name);
    if (!loaded || !entry || entry.pkg.hash !== loaded.hash) return 'Error: load the Skill before reading its resources';
    const checked = checkSupportPath(rel);
    if (!checked.ok) return `Error: ${checked.error}`;
    // a bounded head: large support files (imports allow up to 5 MiB) are read in part, the rest with exec
    const head = await this.store.readResourceHead(entry.pkg.source, name, checked.path, RESOURCE_HEAD_READ_BYTES);
    if (!head) return 'Error: resource not found';
    const baseDir = this.turns.baseDirectory(ctx.chatId, name);
    const receipt = `[Skill resource read: ${name}/${checked.path}]`;
    const complete = head.data.length >= head.size;
    const text = textHead(head.data, complete);
    const content =
      text !== null
        ? textResourceHead(text, checked.path, head.size, complete, baseDir)
        : describeBinaryResource(head.data, checked.path, baseDir, head.size);
    return { model: `${receipt}\n\n${content}`, public: receipt, persisted: receipt };
  }
}

export class AgentSkillManageTool implements AgentTool {
  readonly name = AGENT_SKILL_MANAGE_TOOL;
  readonly description =
    'Create a new agent-owned Skill package (load the skill-creator Skill first for the authoring rules). ' +
    'Only action "create" is supported. Report success only when the result has "success": true.';
  readonly parameters = schema(
    {
      action: { type: 'string', enum: ['create'] },
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', description: 'Skill name (package directory)' },
      content: { type: 'string', description: 'the full SKILL.md (YAML frontmatter + body)' },
      support_files: {
        type: 'object',
        additionalProperties: { type: 'string' },
        maxProperties: 64,
        description: 'package-relative path -> text, e.g. {"references/notes.md": "..."}',
      },
      reason: { type: 'string', maxLength: MANAGE_REASON_MAX_CHARS, description: 'why this Skill is created' },
    },
    ['action', 'name', 'content'],
  );
  readonly readOnly = false;

  private readonly logger = new Logger(AgentSkillManageTool.name);

  constructor(
    private readonly admin: SkillsAdminService,
    private readonly store: SkillStore,
    /** a Skill the agent writes has no grant of its pre-approvals (only the owner grants them, in the console) */
    private readonly grants: SkillGrantsService,
  ) {}

  async execute(args: Record<string, unknown>): Promise<string> {
    return pythonJson(await this.manage(args));
  }

  /** Creates an agent Skill; never throws. */
  private async manage(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const fail = (code: string, detail: string) => ({
      success: false,
      action: 'create',
      code,
      detail: boundText(sanitizeStoreDiagnostic(this.store, detail), 240),
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
      const record = await this.admin.create({
        name: args['name'],
        content: args['content'],
        source: 'agent',
        supportFiles: supportFiles ?? undefined,
        enabled: true,
        reason: typeof reason === 'string' ? reason : undefined,
      });
      await this.grants.contentChanged('agent', record.name);
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

}
