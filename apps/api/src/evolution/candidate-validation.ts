import type { SkillEvolutionValidation } from '@cashcode/contracts';
import { parseSkillMarkdown } from '@cashcode/skill-format';

/**
 * The SKILL.md rules (openspec skills "Requirement: SKILL.md validation", and the Agent Skills fields) applied to a
 * candidate, with the proposal's name as the expected package name — the same validator SkillsModule publishes with.
 */
export function validateCandidate(content: string, name: string): SkillEvolutionValidation {
  const result = parseSkillMarkdown(content, { expectedName: name });
  return result.ok ? { valid: true, errors: [] } : { valid: false, errors: [result.error] };
}
