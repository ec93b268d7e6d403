/**
 * The rules of a Skill ZIP import as data: the archive limits, the exact messages (openspec skills "Requirement: ZIP
 * import"), the problem `reason` of each rule (clients translate the import error by it) and the two ways a rule
 * refuses an archive: as a whole, or naming the member that broke it (also as the problem's `member`, with the limit
 * when one applies).
 */
import type { ProblemReason } from '@cashcode/contracts';
import { PACKAGE_MAX_TOTAL_BYTES } from '@cashcode/skill-format';
import { SkillError } from './skills.errors';

export const ZIP_MAX_BYTES = 10 * 1024 * 1024;
/** entries of one archive (a repository download holding several Skills) */
export const ZIP_MAX_ARCHIVE_ENTRIES = 4096;
/** entries of the package imported from it */
export const ZIP_MAX_ENTRIES = 256;
export const ZIP_MAX_EXPANDED_BYTES = PACKAGE_MAX_TOTAL_BYTES;

/** `242,277 bytes` */
function bytes(n: number): string {
  return `${n.toLocaleString('en-US')} bytes`;
}

/** `5,242,880 bytes (5 MiB)` */
export function limitBytes(n: number): string {
  const mib = n / (1024 * 1024);
  return Number.isInteger(mib) ? `${bytes(n)} (${mib} MiB)` : bytes(n);
}

/** A member name as shown in a message: control characters escaped, at most 300 characters. */
export function shownMember(name: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = name.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped.length > 300 ? `${escaped.slice(0, 300)}…` : escaped;
}

export const ARCHIVE_MESSAGES = {
  invalidOrOversized: 'invalid or oversized ZIP archive',
  invalid: 'invalid ZIP archive',
  empty: 'archive is empty',
  tooManyEntries: 'archive contains too many entries',
  illegalPath: 'archive contains an illegal path',
  unsupportedMember: 'archive contains an unsupported member type',
  symlinkOrSpecial: 'archive contains a symlink or special file',
  encrypted: 'encrypted archive entries are not supported',
  duplicates: 'archive contains duplicate paths',
  memberTooLarge: 'archive member is too large',
  expandsTooMuch: 'archive expands beyond the allowed size',
  fileDirConflict: 'archive contains a file and directory path conflict',
  layout: 'archive must contain SKILL.md at its root or in exactly one top-level directory',
  outside: 'archive contains entries outside the Skill package',
  invalidPackagePath: (rel: string) => `invalid package path: ${rel}`,
  mustBeDirectory: (dir: string) => `${dir} must be a directory`,
  fileTooLarge: (rel: string) => `package file is too large: ${rel}`,
  notUtf8: 'SKILL.md must be UTF-8',
  /** the per-member form: `<rule>: <member>[; <why>]` */
  member: (rule: string, member: string, why?: string) => `${rule}: ${shownMember(member)}${why ? `; ${why}` : ''}`,
  sizeOver: (size: number, limit: number) => `it is ${bytes(size)}; the limit is ${limitBytes(limit)} per file`,
  totalOver: (total: number, limit: number) => `the files total ${bytes(total)} so far; the limit is ${limitBytes(limit)}`,
  entriesOver: (limit: number) => `the limit is ${limit.toLocaleString('en-US')} entries`,
} as const;

type ArchiveReason = ProblemReason<'skill_validation'>;

/** The problem's `reason` of each fixed archive rule (clients translate the import error by it). */
const ARCHIVE_REASONS = new Map<string, ArchiveReason>([
  [ARCHIVE_MESSAGES.invalidOrOversized, 'archive_invalid'],
  [ARCHIVE_MESSAGES.invalid, 'archive_invalid'],
  [ARCHIVE_MESSAGES.empty, 'archive_empty'],
  [ARCHIVE_MESSAGES.tooManyEntries, 'archive_too_many_entries'],
  [ARCHIVE_MESSAGES.illegalPath, 'archive_illegal_path'],
  [ARCHIVE_MESSAGES.unsupportedMember, 'archive_unsupported_member'],
  [ARCHIVE_MESSAGES.symlinkOrSpecial, 'archive_symlink'],
  [ARCHIVE_MESSAGES.encrypted, 'archive_encrypted'],
  [ARCHIVE_MESSAGES.duplicates, 'archive_duplicates'],
  [ARCHIVE_MESSAGES.memberTooLarge, 'archive_member_too_large'],
  [ARCHIVE_MESSAGES.expandsTooMuch, 'archive_expands_too_much'],
  [ARCHIVE_MESSAGES.fileDirConflict, 'archive_file_dir_conflict'],
  [ARCHIVE_MESSAGES.layout, 'archive_layout'],
  [ARCHIVE_MESSAGES.outside, 'archive_outside'],
  [ARCHIVE_MESSAGES.invalidPackagePath('').split(':')[0] as string, 'archive_invalid_package_path'],
  [ARCHIVE_MESSAGES.fileTooLarge('').split(':')[0] as string, 'archive_file_too_large'],
  [ARCHIVE_MESSAGES.notUtf8, 'skill_md_not_utf8'],
]);

/** The reason of a rule; `<dir> must be a directory` by its shape; any other message is SKILL.md's validation. */
export function archiveReason(rule: string): ArchiveReason {
  const known = ARCHIVE_REASONS.get(rule);
  if (known) return known;
  return rule.endsWith(' must be a directory') ? 'archive_must_be_directory' : 'skill_md_invalid';
}

/** A refusal of the archive as a whole. */
export function rejectArchive(message: string): never {
  throw new SkillError('validation', message, 'file', { extensions: { reason: archiveReason(message) } });
}

/** A per-member refusal: the member in the message and as the problem's `member`, with the limit when one applies. */
export function rejectMember(rule: string, member: string, why?: string, limit?: number): never {
  throw new SkillError('validation', ARCHIVE_MESSAGES.member(rule, member, why), 'file', {
    extensions: { reason: archiveReason(rule), member, ...(limit !== undefined ? { limit } : {}) },
  });
}
