import { HttpStatus } from '@nestjs/common';
import { DomainError, type DomainProblem, validationProblem } from '../common/domain-error';

export type EvolutionErrorCode =
  /** no proposal with that id */
  | 'proposal_not_found'
  /** approve/reject of a proposal that was already applied or rejected */
  | 'proposal_not_pending'
  /** the candidate SKILL.md fails validation now */
  | 'proposal_invalid'
  /** an update whose target is not an agent Skill (any more) */
  | 'skill_not_agent'
  /** the target changed since the proposal was made, or it vanished */
  | 'skill_changed'
  /** create: a Skill (package directory) of that name exists in some root */
  | 'skill_exists'
  /** the Skill could not be published (disk or catalog failure) */
  | 'skill_publication'
  /** the Skills service is not available */
  | 'unavailable';

const STATUS: Record<EvolutionErrorCode, number> = {
  proposal_not_found: HttpStatus.NOT_FOUND,
  proposal_not_pending: HttpStatus.CONFLICT,
  proposal_invalid: HttpStatus.UNPROCESSABLE_ENTITY,
  skill_not_agent: HttpStatus.FORBIDDEN,
  skill_changed: HttpStatus.CONFLICT,
  skill_exists: HttpStatus.CONFLICT,
  skill_publication: HttpStatus.INTERNAL_SERVER_ERROR,
  unavailable: HttpStatus.SERVICE_UNAVAILABLE,
};

/** The original server's messages where it had one (openspec skill-evolution). */
export const EVOLUTION_MESSAGES = {
  notFound: 'proposal not found',
  notPending: 'proposal is not pending',
  invalid: 'proposal candidate is invalid',
  notAgent: 'evolution can modify only agent Skills',
  changed: 'Skill content changed since it was read',
  vanished: 'the Skill this proposal updates no longer exists',
  unavailable: 'Skill evolution service is unavailable',
  publication: 'Skill publication failed unexpectedly',
} as const;

/**
 * Coded domain error of EvolutionModule; its HTTP problem is chosen once (evolutionProblem) and rendered by the global problem-details filter. Messages are user-facing and never
 * contain a host path or a secret.
 */
export class EvolutionError extends DomainError<EvolutionErrorCode> {
  constructor(
    code: EvolutionErrorCode,
    message: string,
    /** validation messages of a `proposal_invalid` candidate */
    readonly errors: readonly string[] = [],
  ) {
    super(code, message, evolutionProblem(code, errors));
  }
}

function evolutionProblem(code: EvolutionErrorCode, errors: readonly string[]): DomainProblem {
  if (code === 'proposal_invalid') {
    return validationProblem(errors.map((message) => ({ field: 'candidate_content', message })));
  }
  return { status: STATUS[code] };
}
