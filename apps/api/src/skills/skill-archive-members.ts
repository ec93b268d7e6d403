/**
 * The members of a Skill ZIP, checked from the central directory before anything is extracted:
 *
 * - per entry, in order: legal name (no backslash, NUL, absolute or drive-letter path, no empty/`.`/`..` segment, no
 *   control character, at most PACKAGE_MAX_DEPTH folders deep), directory entries really directories, files regular
 *   (no symlink / device), not encrypted, no case-insensitive duplicate (`a` vs `a/` too), declared size ≤ 5 MiB;
 *   then no file that is also a directory of another entry;
 * - layout: the packages are the folders holding a `SKILL.md` (not inside another package; a macOS `__MACOSX/`
 *   resource-fork folder is ignored), and the single package imported without a selection, if there is one.
 */
import type { Entry } from 'yauzl';
import { PACKAGE_FILE_MAX_BYTES, PACKAGE_MAX_DEPTH, SKILL_FILE } from '@cashcode/skill-format';
import { isZipMemberEncrypted, zipMemberName, zipMemberPath, zipMemberType } from '../common/zip-member';
import { ARCHIVE_MESSAGES, rejectArchive, rejectMember } from './skill-archive-rules';

/** macOS Finder's resource-fork folder, skipped (never extracted) */
const MACOS_RESOURCE_DIR = '__MACOSX';

export interface Member {
  entry: Entry;
  /** normalised path without a trailing slash */
  path: string;
  segments: string[];
  directory: boolean;
}

function checkMemberName(name: string): { path: string; segments: string[]; directory: boolean } {
  const checked = zipMemberPath(name);
  if (checked === null) rejectMember(ARCHIVE_MESSAGES.illegalPath, name);
  if (checked.segments.length > PACKAGE_MAX_DEPTH + 1) {
    rejectMember(ARCHIVE_MESSAGES.illegalPath, name, `the limit is ${PACKAGE_MAX_DEPTH} folders deep`);
  }
  return checked;
}

/** The members found, the package roots ('' = archive root) and the root imported without a selection, if any. */
export interface CheckedMembers {
  members: Member[];
  roots: string[];
  single: string | null;
}

/** Checks every entry of the central directory and finds the package roots (see the file comment). */
export function checkMembers(yauzl: typeof import('yauzl'), entries: readonly Entry[]): CheckedMembers {
  // ---- per entry
  const members: Member[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const name = zipMemberName(yauzl, entry);
    const { path, segments, directory } = checkMemberName(name);
    const fileType = zipMemberType(entry);
    if (directory && fileType !== 'unknown' && fileType !== 'directory') rejectMember(ARCHIVE_MESSAGES.unsupportedMember, name);
    if (!directory && fileType !== 'unknown' && fileType !== 'file') rejectMember(ARCHIVE_MESSAGES.symlinkOrSpecial, name);
    if (isZipMemberEncrypted(entry)) rejectMember(ARCHIVE_MESSAGES.encrypted, name);
    const key = path.toLowerCase();
    if (seen.has(key)) rejectMember(ARCHIVE_MESSAGES.duplicates, name);
    seen.add(key);
    if (!directory && entry.uncompressedSize > PACKAGE_FILE_MAX_BYTES) {
      rejectMember(
        ARCHIVE_MESSAGES.memberTooLarge,
        name,
        ARCHIVE_MESSAGES.sizeOver(entry.uncompressedSize, PACKAGE_FILE_MAX_BYTES),
        PACKAGE_FILE_MAX_BYTES,
      );
    }
    members.push({ entry, path, segments, directory });
  }
  const parentDirs = new Set<string>();
  for (const member of members) {
    for (let i = 1; i < member.segments.length; i++) parentDirs.add(member.segments.slice(0, i).join('/').toLowerCase());
  }
  for (const member of members) {
    if (!member.directory && parentDirs.has(member.path.toLowerCase())) {
      rejectMember(ARCHIVE_MESSAGES.fileDirConflict, member.path);
    }
  }

  // ---- layout: the package roots, outermost first
  const relevant = members.filter((member) => member.segments[0] !== MACOS_RESOURCE_DIR);
  const skillFiles = relevant
    .filter((member) => !member.directory && member.segments[member.segments.length - 1] === SKILL_FILE)
    .map((member) => member.segments.slice(0, -1).join('/'))
    .sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  const roots: string[] = [];
  for (const root of skillFiles) {
    if (!roots.some((outer) => outer === '' || root.startsWith(`${outer}/`))) roots.push(root);
  }
  if (roots.length === 0) rejectArchive(ARCHIVE_MESSAGES.layout);
  roots.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // listed by path
  let single: string | null = null;
  if (roots.length === 1) {
    const only = roots[0] as string;
    if (only === '') single = '';
    else if (!only.includes('/') && relevant.every((member) => member.segments[0] === only)) single = only;
  }
  return { members: relevant, roots, single };
}
