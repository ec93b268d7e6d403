/**
 * What EvolutionModule needs from SkillsModule, as a small port (bound to SkillsAdminService in evolution.module.ts).
 * Implementations throw EvolutionError for the outcomes a reviewer must see (exists, changed, not agent-owned).
 */
import type { SkillSource } from '@cashcode/contracts';

export const EVOLUTION_SKILLS = Symbol('EVOLUTION_SKILLS');

/** A bounded summary of a catalog entry, the only Skill information the evolver sees. */
export interface EvolutionSkillSummary {
  name: string;
  description: string;
  source: SkillSource;
  version: number;
}

/** The effective Skill of a name, with its SKILL.md. */
export interface EvolutionSkillState {
  name: string;
  source: SkillSource;
  hash: string;
  content: string;
}

export interface AppliedSkill {
  /** manifest version of the Skill now live */
  version: number;
  /** sha256 of the SKILL.md now live */
  hash: string;
  /** replace only: the snapshot taken of the previous package before it was replaced */
  snapshot: string | null;
}

export interface EvolutionSkillsPort {
  /** The effective Skill of that name (any source), or null. */
  find(name: string): Promise<EvolutionSkillState | null>;
  /**
   * Creates an enabled agent Skill with only SKILL.md. Throws EvolutionError `skill_exists` when a package
   * directory of that name exists in any root, `proposal_invalid` when the content fails validation.
   */
  createAgentSkill(name: string, content: string, reason: string): Promise<AppliedSkill>;
  /**
   * Replaces the SKILL.md of an agent Skill (other files kept), snapshotting the current package first. Throws
   * `skill_not_agent`, `skill_changed` (hash differs from expectedHash or the Skill vanished), `proposal_invalid`.
   */
  replaceAgentSkill(name: string, content: string, expectedHash: string): Promise<AppliedSkill>;
  /** Up to `limit` catalog entries (effective catalog, by name). */
  summaries(limit: number): Promise<EvolutionSkillSummary[]>;
  /** The body of the built-in `skill-creator` Skill (the authoring contract), or null when it is missing. */
  creatorContract(): Promise<string | null>;
}
