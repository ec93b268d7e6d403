/**
 * Skill evolution REST shapes (`/api/skill-evolution/proposals`, openspec skill-evolution): evidence of recurring work,
 * Skill proposals generated from it and their review (approve / reject). Proposals are never applied automatically.
 */
import type { LlmSelection } from './llm-provider';

export type SkillEvolutionAction = 'create' | 'update';
export const SKILL_EVOLUTION_ACTIONS: readonly SkillEvolutionAction[] = ['create', 'update'];

export type SkillEvolutionStatus = 'pending' | 'applied' | 'rejected';
export const SKILL_EVOLUTION_STATUSES: readonly SkillEvolutionStatus[] = ['pending', 'applied', 'rejected'];

/** The SKILL.md check of the candidate with the proposal's name as the expected package name. */
export interface SkillEvolutionValidation {
  valid: boolean;
  errors: string[];
}

/** A tool call of the turn an evidence record comes from (arguments redacted and truncated). */
export interface SkillEvolutionToolCall {
  name: string;
  arguments: string;
}

/**
 * One successful turn that used tools (file `skill-evolution/evidence/<id>.json`). Every text is redacted (secret
 * patterns and the server's known secret values) and truncated; the chat id is only kept as a short hash.
 */
export interface SkillEvolutionEvidence {
  /** `<epoch ms>-<8 hex>` */
  id: string;
  /** workflow fingerprint (24 hex) */
  fingerprint: string;
  /** first 12 hex of sha256(chat id) */
  chat_id_hash: string;
  /** the user's request (≤ 2000 chars) */
  user: string;
  /** the final answer (≤ 2500 chars) */
  assistant: string;
  /** tool names as called, in order, with repetition */
  tools: string[];
  /** additive: the calls with their (redacted, ≤ 300 chars) arguments */
  tool_calls: SkillEvolutionToolCall[];
  /** the persisted tool results (≤ 500 chars each) */
  tool_receipts: string[];
  /** ISO 8601 */
  created_at: string;
}

/** File `skill-evolution/proposals/<id>.json` and the body of the proposal endpoints. */
export interface SkillEvolutionProposal {
  /** 32 hex */
  id: string;
  action: SkillEvolutionAction;
  /** the Skill to create or update */
  name: string;
  /** the full proposed SKILL.md */
  candidate_content: string;
  reason: string;
  evidence_ids: string[];
  /** hash of the agent Skill an update is based on; null for create */
  base_hash: string | null;
  status: SkillEvolutionStatus;
  validation: SkillEvolutionValidation;
  /** ISO 8601 */
  created_at: string;
  /** ISO 8601 */
  updated_at: string;
  /**
   * What approval actually created (not the version the proposal was based on): for an update the snapshot id of the
   * Skill's previous package (the rollback point, `<epoch ms>-<8 hex>`), for a create the new Skill's manifest version.
   * Null until applied.
   */
  applied_version: string | null;
  fingerprint: string;
  /** additive: the model that generated the proposal */
  model: LlmSelection | null;
}

/** `GET /api/skill-evolution/proposals`: newest first. */
export interface SkillEvolutionProposalList {
  /** SKILL_EVOLUTION_ENABLED: whether new turns are collected as evidence */
  enabled: boolean;
  items: SkillEvolutionProposal[];
}

/** The Skill an update proposal targets, as it is now. */
export interface SkillEvolutionCurrentSkill {
  name: string;
  source: 'builtin' | 'user' | 'agent';
  hash: string;
  content: string;
}

/** `GET /api/skill-evolution/proposals/{id}`: the proposal plus what a reviewer needs (additive fields). */
export interface SkillEvolutionProposalDetail extends SkillEvolutionProposal {
  /** the evidence records the proposal came from that still exist (redacted) */
  evidence: SkillEvolutionEvidence[];
  /** the Skill of that name now (update: the target; create: a Skill that appeared since), or null */
  current: SkillEvolutionCurrentSkill | null;
  /** unified diff from the current SKILL.md to the candidate; null when there is no current Skill */
  diff: string | null;
  /**
   * pending only: approving will be refused because the Skill changed since the proposal was made (update: the target
   * is gone, no longer agent-owned or its hash differs from `base_hash`; create: the name is taken now)
   */
  stale: boolean;
}
