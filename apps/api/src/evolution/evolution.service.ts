/**
 * Review of Skill proposals (openspec skill-evolution): list, detail (with the evidence and a diff against the current
 * Skill), approve and reject. Approval re-checks everything at that moment — the proposal is still pending, the
 * candidate passes full validation, an update targets an agent Skill whose hash is still the proposal's base hash — and
 * then creates or replaces an **agent** Skill through SkillsModule (which snapshots before replacing). Nothing is ever
 * applied without this call.
 */
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type {
  SkillEvolutionProposal,
  SkillEvolutionProposalDetail,
  SkillEvolutionProposalList,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { unifiedDiff } from '../common/text-diff';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { validateCandidate } from './candidate-validation';
import { EvidenceStore } from './evidence-store';
import { EvolutionError, EVOLUTION_MESSAGES } from './evolution.errors';
import { EVOLUTION_SKILLS, type AppliedSkill, type EvolutionSkillsPort } from './evolution-skills.port';
import { ProposalStore } from './proposal-store';
import { KeyedQueue } from '../common/keyed-queue';

/** A unified diff of two SKILL.md texts, labelled for the reviewer. */
export function skillDiff(current: string, candidate: string): string {
  return unifiedDiff(current, candidate, { before: 'SKILL.md (current)', after: 'SKILL.md (proposed)' });
}

@Injectable()
export class EvolutionService {
  private readonly logger = new Logger(EvolutionService.name);
  /** approve/reject of one proposal run one at a time */
  /** approve/reject of one proposal at a time */
  private readonly locks = new KeyedQueue();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly proposals: ProposalStore,
    private readonly evidence: EvidenceStore,
    @Optional() @Inject(EVOLUTION_SKILLS) private readonly skills: EvolutionSkillsPort | null,
  ) {}

  async list(): Promise<SkillEvolutionProposalList> {
    return { enabled: this.config.skillEvolutionEnabled, items: await this.proposals.list() };
  }

  async get(id: string): Promise<SkillEvolutionProposalDetail> {
    const proposal = await this.require(id);
    const evidence = await this.evidence.readMany(proposal.evidence_ids);
    const current = this.skills ? await this.skills.find(proposal.name) : null;
    return {
      ...proposal,
      evidence,
      current: current
        ? { name: current.name, source: current.source, hash: current.hash, content: current.content }
        : null,
      diff: current ? skillDiff(current.content, proposal.candidate_content) : null,
      stale:
        proposal.status === 'pending' &&
        (proposal.action === 'update'
          ? current?.source !== 'agent' || current.hash !== proposal.base_hash
          : current !== null),
    };
  }

  approve(id: string): Promise<SkillEvolutionProposal> {
    return this.exclusive(id, async () => {
      const proposal = await this.requirePending(id);
      const skills = this.skills;
      if (!skills) throw new EvolutionError('unavailable', EVOLUTION_MESSAGES.unavailable);
      const validation = validateCandidate(proposal.candidate_content, proposal.name);
      if (!validation.valid) {
        throw new EvolutionError('proposal_invalid', EVOLUTION_MESSAGES.invalid, validation.errors);
      }
      let applied: AppliedSkill;
      if (proposal.action === 'create') {
        applied = await skills.createAgentSkill(proposal.name, proposal.candidate_content, proposal.reason);
      } else {
        const current = await skills.find(proposal.name);
        if (!current) throw new EvolutionError('skill_changed', EVOLUTION_MESSAGES.vanished);
        if (current.source !== 'agent') throw new EvolutionError('skill_not_agent', EVOLUTION_MESSAGES.notAgent);
        if (proposal.base_hash === null || current.hash !== proposal.base_hash) {
          throw new EvolutionError('skill_changed', EVOLUTION_MESSAGES.changed);
        }
        applied = await skills.replaceAgentSkill(proposal.name, proposal.candidate_content, proposal.base_hash);
      }
      const updated: SkillEvolutionProposal = {
        ...proposal,
        status: 'applied',
        updated_at: new Date().toISOString(),
        applied_version: applied.snapshot ?? String(applied.version),
      };
      await this.proposals.save(updated);
      this.logger.log(
        formatEvent('skill_evolution.proposal.applied', {
          proposal_id: id,
          action: proposal.action,
          name: proposal.name,
          applied_version: updated.applied_version,
        }),
      );
      return updated;
    });
  }

  reject(id: string): Promise<SkillEvolutionProposal> {
    return this.exclusive(id, async () => {
      const proposal = await this.requirePending(id);
      const updated: SkillEvolutionProposal = { ...proposal, status: 'rejected', updated_at: new Date().toISOString() };
      await this.proposals.save(updated);
      this.logger.log(formatEvent('skill_evolution.proposal.rejected', { proposal_id: id, name: proposal.name }));
      return updated;
    });
  }

  private async require(id: string): Promise<SkillEvolutionProposal> {
    const proposal = await this.proposals.get(id);
    if (!proposal) throw new EvolutionError('proposal_not_found', EVOLUTION_MESSAGES.notFound);
    return proposal;
  }

  private async requirePending(id: string): Promise<SkillEvolutionProposal> {
    const proposal = await this.require(id);
    if (proposal.status !== 'pending') throw new EvolutionError('proposal_not_pending', EVOLUTION_MESSAGES.notPending);
    return proposal;
  }

  /** Runs `task` after any other approve/reject of the same proposal has finished. */
  private exclusive<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.locks.run(id, task);
  }
}
