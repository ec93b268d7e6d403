import { HttpStatus } from '@nestjs/common';
import { ProblemException, PROBLEM_TYPES } from '../common/problem-details';

export type SkillErrorCode =
  /** a built-in (read-only) Skill cannot be changed */
  | 'permission'
  /** a package of that name exists, or the content changed since it was read */
  | 'conflict'
  /** no such Skill / snapshot / invalid package */
  | 'not_found'
  /** a name, content, path, archive or request rule failed */
  | 'validation'
  /** the package could not be published (disk or catalog failure) */
  | 'publication';

/**
 * Coded domain error of SkillsModule, mapped to HTTP once (toHttpException) and to tool results by the skill tools.
 * Messages are user-facing and never contain a host path.
 */
export class SkillError extends Error {
  constructor(
    readonly code: SkillErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'SkillError';
  }
}

/** permission → 403, conflict → 409, not found → 404, validation → 422, publication → 500 (spec §3.5). */
export function skillErrorStatus(code: SkillErrorCode): number {
  switch (code) {
    case 'permission':
      return HttpStatus.FORBIDDEN;
    case 'conflict':
      return HttpStatus.CONFLICT;
    case 'not_found':
      return HttpStatus.NOT_FOUND;
    case 'validation':
      return HttpStatus.UNPROCESSABLE_ENTITY;
    case 'publication':
      return HttpStatus.INTERNAL_SERVER_ERROR;
  }
}

export function toHttpException(error: SkillError): ProblemException {
  const status = skillErrorStatus(error.code);
  if (error.code === 'validation') {
    return new ProblemException(status, error.message, {
      code: 'skill_validation',
      type: PROBLEM_TYPES.validation,
      errors: [{ field: error.field ?? 'body', message: error.message }],
    });
  }
  return new ProblemException(status, error.message, { code: `skill_${error.code}` });
}

export const SKILL_MESSAGES = {
  notFound: 'Skill not found',
  notFoundNamed: (name: string) => `Skill not found: ${name}`,
  builtinReadOnly: 'built-in Skills are read-only',
  exists: (sources: readonly string[], name: string) => `Skill already exists in ${sources.join(', ')}: ${name}`,
  changed: 'Skill content changed since it was read',
  notZip: 'Skill package must be a .zip file',
  zipTooLarge: 'Skill ZIP is too large',
  zipMissing: 'file is required (a .zip Skill package)',
  snapshotNotFound: (version: string) => `snapshot not found: ${version}`,
  invalidVersion: 'invalid snapshot version',
  invalidSource: 'invalid Skill source',
  invalidSelector: 'invalid Skill directory selector',
  invalidNotFound: 'invalid Skill package not found',
  invalidIsValid: 'Skill package is valid and cannot be deleted as invalid',
  didNotEnterCatalog: 'created Skill did not enter the catalog',
  publicationFailed: 'Skill publication failed unexpectedly',
  supportFilesShape: 'support_files must be an object of at most 64 text files',
} as const;
