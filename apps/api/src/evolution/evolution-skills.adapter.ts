/**
 * Binds the EVOLUTION_SKILLS port to SkillsAdminService: agent-only creation and replacement with the Skills module's own
 * checks (name free in every root, expected hash, full package validation, snapshot before replace), its SkillErrors
 * translated into the evolution outcomes a reviewer sees. A Skill evolution creates or replaces has no grant of its
 * pre-approvals: any grant of the package is dropped (only the owner grants them again, in the console).
 */
import { Injectable } from '@nestjs/common';
import { parseSkillMarkdown } from '@cashcode/skill-format';
import { SkillGrantsService } from '../skills/skill-grants.service';
import { SkillError } from '../skills/skills.errors';
import { SkillsAdminService } from '../skills/skills-admin.service';
import { EvolutionError, EVOLUTION_MESSAGES } from './evolution.errors';
import type {
  AppliedSkill,
  EvolutionSkillState,
  EvolutionSkillSummary,
  EvolutionSkillsPort,
} from './evolution-skills.port';

const SKILL_CREATOR = 'skill-creator';
/** SkillsAdminService list page size limit */
const PAGE_SIZE_MAX = 200;

function translate(error: unknown, action: 'create' | 'update'): unknown {
  if (!(error instanceof SkillError)) return error;
  switch (error.code) {
    case 'conflict':
      return action === 'create'
        ? new EvolutionError('skill_exists', error.message)
        : new EvolutionError('skill_changed', EVOLUTION_MESSAGES.changed);
    case 'not_found':
      return new EvolutionError('skill_changed', EVOLUTION_MESSAGES.vanished);
    case 'permission':
      return new EvolutionError('skill_not_agent', EVOLUTION_MESSAGES.notAgent);
    case 'validation':
      return new EvolutionError('proposal_invalid', EVOLUTION_MESSAGES.invalid, [error.message]);
    case 'publication':
      return new EvolutionError('skill_publication', EVOLUTION_MESSAGES.publication);
  }
}

@Injectable()
export class SkillsServiceEvolutionAdapter implements EvolutionSkillsPort {
  constructor(
    private readonly skills: SkillsAdminService,
    private readonly grants: SkillGrantsService,
  ) {}

  async find(name: string): Promise<EvolutionSkillState | null> {
    try {
      const skill = await this.skills.content(name);
      return { name: skill.name, source: skill.source, hash: skill.hash, content: skill.content };
    } catch (error) {
      if (error instanceof SkillError && (error.code === 'not_found' || error.code === 'validation')) return null;
      throw error;
    }
  }

  async createAgentSkill(name: string, content: string, reason: string): Promise<AppliedSkill> {
    try {
      const record = await this.skills.create({ name, content, source: 'agent', enabled: true, reason });
      await this.grants.contentChanged('agent', name);
      return { version: record.version, hash: record.hash, snapshot: null };
    } catch (error) {
      throw translate(error, 'create');
    }
  }

  async replaceAgentSkill(name: string, content: string, expectedHash: string): Promise<AppliedSkill> {
    const current = await this.find(name);
    if (!current) throw new EvolutionError('skill_changed', EVOLUTION_MESSAGES.vanished);
    if (current.source !== 'agent') throw new EvolutionError('skill_not_agent', EVOLUTION_MESSAGES.notAgent);
    try {
      const record = await this.skills.replace(name, { content, expectedHash });
      await this.grants.contentChanged('agent', name);
      return { version: record.version, hash: record.hash, snapshot: record.snapshot };
    } catch (error) {
      throw translate(error, 'update');
    }
  }

  async summaries(limit: number): Promise<EvolutionSkillSummary[]> {
    const page = await this.skills.list({ page: 1, pageSize: Math.min(Math.max(1, limit), PAGE_SIZE_MAX) });
    return page.items.slice(0, limit).map((record) => ({
      name: record.name,
      description: record.description,
      source: record.source,
      version: record.version,
    }));
  }

  async creatorContract(): Promise<string | null> {
    const skill = await this.find(SKILL_CREATOR);
    if (!skill || skill.source !== 'builtin') return null;
    const parsed = parseSkillMarkdown(skill.content);
    return parsed.ok ? parsed.body : null;
  }
}
