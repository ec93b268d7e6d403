/**
 * Proposal files `<dataDir>/skill-evolution/proposals/<32 hex>.json` (openspec skill-evolution), written atomically.
 * Unreadable or malformed files are skipped by the list (and reported once in the log).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  LLM_PROVIDERS,
  SKILL_EVOLUTION_ACTIONS,
  SKILL_EVOLUTION_STATUSES,
  type LlmProvider,
  type LlmSelection,
  type SkillEvolutionAction,
  type SkillEvolutionProposal,
  type SkillEvolutionStatus,
} from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export const PROPOSAL_ID_PATTERN = /^[0-9a-f]{32}$/;
const FILE_PATTERN = /^([0-9a-f]{32})\.json$/;

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

function parseModel(value: unknown): LlmSelection | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  return typeof v['provider'] === 'string' &&
    LLM_PROVIDERS.includes(v['provider'] as LlmProvider) &&
    typeof v['model'] === 'string'
    ? { provider: v['provider'] as LlmProvider, model: v['model'] }
    : null;
}

/** Narrows a parsed proposal file; null when it is not a well-formed proposal. */
export function parseProposal(value: unknown): SkillEvolutionProposal | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const validation = v['validation'] as Record<string, unknown> | null | undefined;
  if (
    typeof v['id'] !== 'string' ||
    !PROPOSAL_ID_PATTERN.test(v['id']) ||
    !SKILL_EVOLUTION_ACTIONS.includes(v['action'] as SkillEvolutionAction) ||
    typeof v['name'] !== 'string' ||
    typeof v['candidate_content'] !== 'string' ||
    typeof v['reason'] !== 'string' ||
    !isStringList(v['evidence_ids']) ||
    !(v['base_hash'] === null || typeof v['base_hash'] === 'string') ||
    !SKILL_EVOLUTION_STATUSES.includes(v['status'] as SkillEvolutionStatus) ||
    typeof validation !== 'object' ||
    validation === null ||
    typeof validation['valid'] !== 'boolean' ||
    !isStringList(validation['errors']) ||
    typeof v['created_at'] !== 'string' ||
    typeof v['updated_at'] !== 'string' ||
    !(v['applied_version'] === null || v['applied_version'] === undefined || typeof v['applied_version'] === 'string') ||
    typeof v['fingerprint'] !== 'string'
  ) {
    return null;
  }
  return {
    id: v['id'],
    action: v['action'] as SkillEvolutionAction,
    name: v['name'],
    candidate_content: v['candidate_content'],
    reason: v['reason'],
    evidence_ids: v['evidence_ids'],
    base_hash: v['base_hash'],
    status: v['status'] as SkillEvolutionStatus,
    validation: { valid: validation['valid'], errors: validation['errors'] },
    created_at: v['created_at'],
    updated_at: v['updated_at'],
    applied_version: (v['applied_version'] as string | null | undefined) ?? null,
    fingerprint: v['fingerprint'],
    model: parseModel(v['model']),
  };
}

@Injectable()
export class ProposalStore {
  private readonly logger = new Logger(ProposalStore.name);
  private readonly dir: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.dir = join(config.skillEvolutionDir, 'proposals');
  }

  async save(proposal: SkillEvolutionProposal): Promise<void> {
    await mkdirPrivate(this.dir);
    await writeJsonAtomic(join(this.dir, `${proposal.id}.json`), proposal);
  }

  /** The proposal, or null when the id is malformed, the file is missing or it does not parse. */
  async get(id: string): Promise<SkillEvolutionProposal | null> {
    if (!PROPOSAL_ID_PATTERN.test(id)) return null;
    let text: string;
    try {
      text = await fs.readFile(join(this.dir, `${id}.json`), 'utf8');
    } catch {
      return null;
    }
    try {
      const proposal = parseProposal(JSON.parse(text));
      return proposal && proposal.id === id ? proposal : null;
    } catch {
      return null;
    }
  }

  /** Every readable proposal, newest first (`created_at` descending, then id). */
  async list(): Promise<SkillEvolutionProposal[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch {
      return [];
    }
    const proposals: SkillEvolutionProposal[] = [];
    let unreadable = 0;
    for (const name of names) {
      const id = FILE_PATTERN.exec(name)?.[1];
      if (!id) continue;
      const proposal = await this.get(id);
      if (proposal) proposals.push(proposal);
      else unreadable++;
    }
    if (unreadable > 0) this.logger.warn(formatEvent('skill_evolution.proposal.unreadable', { count: unreadable }));
    return proposals.sort((a, b) =>
      a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at),
    );
  }

  /** Whether a pending or applied proposal has this fingerprint (then no new one is generated). */
  async hasOpenWithFingerprint(fingerprint: string): Promise<boolean> {
    const proposals = await this.list();
    return proposals.some((p) => p.fingerprint === fingerprint && (p.status === 'pending' || p.status === 'applied'));
  }
}
