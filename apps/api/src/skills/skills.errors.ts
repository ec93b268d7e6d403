import { HttpStatus } from '@nestjs/common';
import { DomainError, type DomainProblem, validationProblem } from '../common/domain-error';

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
 * Coded domain error of SkillsModule; its HTTP problem is chosen once (skillProblem) and rendered by the global
 * problem-details filter, and the skill tools map it to tool results. Messages are user-facing and never contain a
 * host path.
 */
export class SkillError extends DomainError<SkillErrorCode> {
  constructor(
    code: SkillErrorCode,
    message: string,
    readonly field?: string,
    /** additive problem members (`member`, `limit`, `skills`, `replace_builtin`) and an optional finer problem code */
    details?: { extensions?: Record<string, unknown>; problemCode?: string },
  ) {
    const problem = skillProblem(code, message, field);
    super(code, message, {
      ...problem,
      ...(details?.problemCode ? { code: details.problemCode } : {}),
      ...(details?.extensions ? { extensions: details.extensions } : {}),
    });
  }
}

/**
 * permission → 403, conflict → 409, not found → 404, validation → 422, publication → 500 (openspec skills); the problem
 * `code` is `skill_<code>`.
 */
function skillProblem(code: SkillErrorCode, message: string, field: string | undefined): DomainProblem {
  switch (code) {
    case 'permission':
      return { status: HttpStatus.FORBIDDEN, code: 'skill_permission' };
    case 'conflict':
      return { status: HttpStatus.CONFLICT, code: 'skill_conflict' };
    case 'not_found':
      return { status: HttpStatus.NOT_FOUND, code: 'skill_not_found' };
    case 'validation':
      return validationProblem([{ field: field ?? 'body', message }], 'skill_validation');
    case 'publication':
      return { status: HttpStatus.INTERNAL_SERVER_ERROR, code: 'skill_publication' };
  }
}

export const SKILL_MESSAGES = {
  notFound: 'Skill not found',
  notFoundNamed: (name: string) => `Skill not found: ${name}`,
  builtinReadOnly: 'built-in Skills are read-only',
  exists: (sources: readonly string[], name: string) => `Skill already exists in ${sources.join(', ')}: ${name}`,
  changed: 'Skill content changed since it was read',
  notZip: 'Skill package must be a .zip or .skill file',
  zipTooLarge: 'Skill ZIP is too large',
  zipMissing: 'file is required (a .zip or .skill Skill package)',
  existsBuiltin: (name: string) =>
    `Skill already exists in builtin: ${name}; import again with replace_builtin=true to shadow the built-in (deleting the import restores it)`,
  multipleSkills: (names: readonly string[]) =>
    `archive contains ${names.length} Skills (${names.join(', ')}); choose which to import with select=<name>`,
  selectUnknown: (name: string, names: readonly string[]) =>
    `select names no Skill of the archive: ${name}; the archive contains ${names.join(', ') || 'no valid Skill'}`,
  selectInvalid: 'select must name Skills of the archive (at most 64)',
  replaceBuiltinInvalid: 'replace_builtin must be true or false',
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
