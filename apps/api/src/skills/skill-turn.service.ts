/**
 * The Skills of one chat turn: the explicitly selected Skills loaded before the model runs, the Skills the model
 * loads with skill_load, the `allowed-tools` pre-approvals they bring (the tools a loaded Skill lists run without
 * asking in that turn, only while the owner's grant names the loaded package content: skill-grants.service.ts; other
 * tools are not restricted), the chat's recently-activated list in metadata.json and the system prompt sections about
 * Skills. Nothing of a turn carries over to the next one.
 */
import * as path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { formatSkillReceipt, type LoadedSkillReceipt, type SkillSource } from '@cashcode/contracts';
import type { ToolContext } from '../agent/agent-tool';
import { MCP_TOOL_PREFIX, ToolRegistry } from '../agent/tool-registry';
import { addAllowedTools, emptyPreApprovals, type PreApprovals } from '../approvals/skill-pre-approvals';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { McpService } from '../mcp/mcp.service';
import { HistoryLogStore } from '../memory/history-log.store';
import type { ActivatedSkillEntry } from '../memory/memory.types';
import { pythonJson } from './python-json';
import { SKILL_CATALOG, SkillCatalog } from './skill-catalog';
import { sanitizeStoreDiagnostic } from './skill-diagnostics';
import { boundText, errorName, isPlainObject, logicalPath } from './skill-helpers';
import { renderSkillIndex } from './skill-index';
import { SkillGrantsService, type PackageContent } from './skill-grants.service';
import { epochSeconds } from './skill-publication';
import { SkillStore } from './skill-store';
import { LRUCache } from 'lru-cache';

export const ACTIVATED_SKILLS_CAPACITY = 12;
export const SKILL_INDEX_CHATS = 512;
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

/** A selected Skill that could not be loaded: the turn runs without it and the user is warned. */
export interface SkippedSkill {
  name: string;
  /** the skill_load error class (skill_not_found, skill_disabled, missing_dependency, invalid_skill, …) */
  code: string;
  /** `Unable to load @<name>: <skill_load error JSON>` */
  detail: string;
}

/** What a chat turn gets for its explicit Skill selections. */
export interface ExplicitSkillsResult {
  /** the second system message, or null when nothing was loaded */
  systemMessage: string | null;
  /** assistant receipts to persist with the turn, in selection order */
  receipts: string[];
  loaded: LoadedSkillReceipt[];
  /** the selections that could not be loaded, in selection order */
  skipped: SkippedSkill[];
}

export interface TurnSkillContext {
  chatId: string;
  turnId: string;
  signal: AbortSignal;
}

interface LoadedInTurn {
  name: string;
  source: SkillSource;
  hash: string;
  version: number;
  /** the manifest's `allowed-tools` entries as written (pre-approved while loaded and granted), null when absent */
  allowedTools: string[] | null;
  /** the package content the owner's grant named at load time; null when not granted (nothing pre-approved) */
  granted: PackageContent | null;
  /** the package's directory on the host */
  dir: string;
}

interface TurnSkills {
  turnId: string;
  active: boolean;
  loaded: Map<string, LoadedInTurn>;
}

/** The result of loading a Skill into a turn (skill_load and explicit selections share it). */
export type LoadOutcome =
  | { kind: 'error'; payload: Record<string, unknown> }
  | { kind: 'already'; name: string; receipt: string }
  | { kind: 'loaded'; name: string; receipt: string; model: string; body: string; receiptData: LoadedSkillReceipt };

@Injectable()
export class SkillTurnService {
  private readonly logger = new Logger(SkillTurnService.name);
  private readonly turns = new Map<string, TurnSkills>();

  private readonly indexSnapshots = new LRUCache<string, { index: string | null }>({ max: SKILL_INDEX_CHATS });
  /** chats that have loaded a Skill (from their activated_skills, or a load in this process) */
  private readonly chatsWithSkills = new LRUCache<string, true>({ max: SKILL_INDEX_CHATS });

  /** exec's directory for a Skill (`/skills/<name>` in the sandbox); null when exec is not available */
  private baseDirectoryOf: ((name: string, hostDir: string) => string) | null = null;

  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
    private readonly registry: ToolRegistry,
    private readonly memory: HistoryLogStore,
    private readonly mcp: McpService,
    private readonly grants: SkillGrantsService,
  ) {}


  /**
   * Loads the explicitly selected Skills of a turn before the model runs. A failure is the turn's
   * error: `Unable to load @<name>: <the skill_load error JSON>`.
   */
  async prepareExplicitSkills(names: readonly string[], ctx: TurnSkillContext): Promise<ExplicitSkillsResult> {
    this.beginTurn(ctx.chatId, ctx.turnId);
    const bodies: string[] = [];
    const receipts: string[] = [];
    const loaded: LoadedSkillReceipt[] = [];
    const skipped: SkippedSkill[] = [];
    for (const name of [...new Set(names)]) {
      const outcome = await this.loadSkill(name, ctx);
      if (outcome.kind === 'error') {
        const code = typeof outcome.payload['error'] === 'string' ? outcome.payload['error'] : 'skill_load_failed';
        skipped.push({ name, code, detail: `Unable to load @${name}: ${pythonJson(outcome.payload, true)}` });
        continue;
      }
      if (outcome.kind === 'loaded') {
        bodies.push(outcome.model);
        receipts.push(outcome.receipt);
        loaded.push(outcome.receiptData);
      }
    }
    return {
      systemMessage: bodies.length > 0 ? `The user explicitly selected these Skills:\n\n${bodies.join('\n\n---\n\n')}` : null,
      receipts,
      loaded,
      skipped,
    };
  }

  /** The system prompt parts about Skills: the `## Skill usage` paragraph and the recently-activated summary. */
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
   * The tools pre-approved in a chat's current turn: the `allowed-tools` of every Skill loaded in it whose package
   * the owner granted them for, checked again now (a revoked grant or a package changed since loading pre-approves
   * nothing). Agent Skills meaning: they run without asking; nothing else is restricted. Null when none applies.
   */
  preApprovals(chatId: string): PreApprovals | null {
    const state = this.turns.get(chatId);
    if (!state || !state.active) return null;
    let pre: PreApprovals | null = null;
    for (const skill of state.loaded.values()) {
      const granted = skill.granted;
      if (granted === null || granted.allowedTools === null || !this.grants.stillGranted(skill.source, skill.name, granted)) continue;
      // the entries of the granted content (what the owner saw), which is what is on disk now
      pre = addAllowedTools(pre ?? emptyPreApprovals(), granted.allowedTools);
    }
    return pre;
  }

  /** Set by the Skills module from the exec tool: where exec sees a Skill's directory. */
  setBaseDirectoryResolver(resolver: ((name: string, hostDir: string) => string) | null): void {
    this.baseDirectoryOf = resolver;
  }

  /** exec's base directory of a Skill loaded in the chat's current turn (`/skills/<name>`), null when none. */
  baseDirectory(chatId: string, name: string): string | null {
    const state = this.turns.get(chatId);
    const skill = state && state.active ? state.loaded.get(name) : undefined;
    return skill && this.baseDirectoryOf ? this.baseDirectoryOf(name, skill.dir) : null;
  }

  /** The Skills loaded in the chat's current turn with their host directories (exec mounts them read-only). */
  mountedSkills(chatId: string): Array<{ name: string; dir: string }> {
    const state = this.turns.get(chatId);
    if (!state || !state.active) return [];
    return [...state.loaded.values()].map((skill) => ({ name: skill.name, dir: skill.dir }));
  }

  private turnState(chatId: string, turnId: string): TurnSkills {
    let state = this.turns.get(chatId);
    if (!state || state.turnId !== turnId) {
      state = { turnId, active: true, loaded: new Map() };
      this.turns.set(chatId, state);
    }
    return state;
  }

  /** Whether the chat has loaded a Skill, now or before (skill_read_resource is offered from then on). */
  hasLoadedSkills(chatId: string): boolean {
    return this.chatsWithSkills.has(chatId) || (this.turns.get(chatId)?.loaded.size ?? 0) > 0;
  }

  /** The Skill of that name loaded in the chat's current turn `turnId`, if any. */
  loadedInTurn(chatId: string, turnId: string, name: string): { hash: string } | undefined {
    const state = this.turns.get(chatId);
    return state && state.turnId === turnId ? state.loaded.get(name) : undefined;
  }

  /**
   * The `## Installed Skills` index of a chat: rendered from the catalog at the chat's first turn in this server
   * process and reused unchanged afterwards, so the prompt prefix stays cacheable; installs, enables and disables
   * show in new chats and after a restart. At most SKILL_INDEX_CHATS chats are remembered (the least recently used is
   * dropped and re-rendered at its next turn).
   */
  skillIndex(chatId: string): string | null {
    const cached = this.indexSnapshots.get(chatId);
    if (cached !== undefined) return cached.index;
    const index = renderSkillIndex(this.catalog.list());
    this.indexSnapshots.set(chatId, { index });
    return index;
  }

  /** The `## Recently activated Skills` system prompt section of a chat, or null when it lists nothing. */
  async recentSkillsSummary(chatId: string): Promise<string | null> {
    const activated = (await this.memory.getChat(chatId)).metadata.activated_skills;
    if (!isPlainObject(activated)) return null;
    if (Object.keys(activated).length > 0) this.chatsWithSkills.set(chatId, true);
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


  /**
   * Loads a Skill into the chat's current turn: the package is re-read from disk, its dependencies checked, its
   * required MCP servers prepared, and the chat's activated list updated.
   */
  async loadSkill(rawName: string, ctx: Pick<ToolContext, 'chatId' | 'turnId' | 'signal'>): Promise<LoadOutcome> {
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
    if (!reread.ok) return { kind: 'error', payload: { error: 'invalid_skill', detail: sanitizeStoreDiagnostic(this.store, reread.error) } };
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
    const allowedTools = pkg.manifest.allowed_tools && pkg.manifest.allowed_tools.length > 0 ? [...pkg.manifest.allowed_tools] : null;
    const dir = path.join(this.store.rootOf(pkg.source), name);
    // the package content as hashed now, when the owner's grant names it (its own allowed-tools then apply)
    const content = allowedTools === null ? null : await this.grants.content(pkg.source, name);
    const granted = content !== null && this.grants.stillGranted(pkg.source, name, content) ? content : null;
    const loaded: LoadedInTurn = { name, source: pkg.source, hash: pkg.hash, version: pkg.manifest.version, allowedTools, granted, dir };
    state.loaded.set(name, loaded);
    await this.recordActivation(ctx.chatId, name, pkg.manifest.description, pkg.manifest.version, pkg.hash);

    const lines = [
      receipt,
      `Skill package: ${logicalPath(pkg.source, name)} (read its files with skill_read_resource using package-relative paths)`,
    ];
    const baseDir = this.baseDirectoryOf?.(name, dir) ?? null;
    if (baseDir !== null) {
      const readOnly = baseDir.startsWith('/skills/') ? 'read-only' : 'read-only by convention: do not write there';
      lines.push(
        `Base directory for this Skill: ${baseDir} (${readOnly}; run its scripts with exec, e.g. cwd "${baseDir}" ` +
          `and command "sh scripts/<file>", or by that full path). Relative paths in the Skill are relative to it; ` +
          'write outputs to the workspace.',
      );
    }
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
    if (allowedTools !== null && granted !== null) {
      lines.push(`Pre-approved while this Skill is loaded (these run without asking the user): ${allowedTools.join(', ')}`);
    } else if (allowedTools !== null) {
      lines.push(
        `Not pre-approved: the owner has not approved this Skill's allowed-tools (${allowedTools.join(', ')}) for its ` +
          'current content, so those tools need the user\'s approval as usual.',
      );
    }
    const model = `${lines.join('\n')}\n\n${pkg.body}`;
    this.logger.log(
      formatEvent('skill.loaded', { name, source: pkg.source, hash: pkg.hash.slice(0, 12) }),
      logIds({ chatId: ctx.chatId, turnId: ctx.turnId }),
    );
    return { kind: 'loaded', name, receipt, model, body: pkg.body, receiptData };
  }

  /** activated_skills LRU (capacity 12, most recent last) in the chat's metadata.json. */
  private async recordActivation(
    chatId: string,
    name: string,
    description: string,
    version: number,
    hash: string,
  ): Promise<void> {
    this.chatsWithSkills.set(chatId, true);
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

}
