/**
 * ZIP import of a Skill package (openspec skills "Requirement: ZIP import"; SECURITY.md "Skill ZIP import"): the
 * extraction of one checked package into a staging directory, and the one entry point of the import. Every rule is
 * checked before anything is extracted; the archive is read in `skill-archive-reader.ts`, its members checked in
 * `skill-archive-members.ts`, and the limits, messages and refusals are `skill-archive-rules.ts` (re-exported here
 * with the reader's `inspectSkillArchive`, so callers import the import's names from this file):
 *
 * - archive: 4 bytes..10 MiB, starts with `PK`, parses; 1..4,096 entries (a repository download lists many Skills);
 * - per entry, in order: legal name (no backslash, NUL, absolute or drive-letter path, no empty/`.`/`..` segment, no
 *   control character), directory entries really directories, files regular (no symlink / device), not encrypted, no
 *   case-insensitive duplicate (`a` vs `a/` too), declared size ≤ 5 MiB; then no file that is also a directory of
 *   another entry. Every per-member message names the member (and the limit it broke), also as the problem's `member`;
 * - layout: the packages are the folders holding a `SKILL.md` (not inside another package; a macOS `__MACOSX/`
 *   resource-fork folder is ignored). `SKILL.md` at the root or in exactly one top-level directory with nothing
 *   outside it imports as before; otherwise the caller selects packages by name (`select`), and without a selection
 *   the archive's packages are listed in the error;
 * - per package: ≤ 256 entries, cumulative declared size ≤ 20 MiB, package paths (`SKILL.md` / `_meta.json` only as
 *   root files, a support directory never a file, SKILL.md ≤ 80,000 declared);
 * - extraction into the hidden staging directory counts the bytes actually inflated (per-file and total limits, size
 *   and CRC-32 must match the declaration); the archive's own root `_meta.json` is never extracted;
 * - SKILL.md must be UTF-8 with valid frontmatter.
 *
 * Nothing in the archive is executed; the caller publishes the staged directory or discards it.
 */
import { crc32 } from 'node:zlib';
import {
  META_FILE,
  SKILL_FILE,
  SKILL_MD_MAX_BYTES,
  PACKAGE_FILE_MAX_BYTES,
  isSupportDir,
  parseSkillMarkdown,
  type SkillManifest,
} from '@cashcode/skill-format';
import { SkillError } from './skills.errors';
import { StagingLimitError, type StagedPackage } from './skill-publication';
import type { Member } from './skill-archive-members';
import { openArchive, packageMembers, type OpenArchive } from './skill-archive-reader';
import {
  ARCHIVE_MESSAGES,
  ZIP_MAX_ENTRIES,
  ZIP_MAX_EXPANDED_BYTES,
  limitBytes,
  rejectArchive,
  rejectMember,
} from './skill-archive-rules';

export {
  ARCHIVE_MESSAGES,
  ZIP_MAX_ARCHIVE_ENTRIES,
  ZIP_MAX_BYTES,
  ZIP_MAX_ENTRIES,
  ZIP_MAX_EXPANDED_BYTES,
  archiveReason,
  shownMember,
} from './skill-archive-rules';
export { inspectSkillArchive, type InspectedArchive } from './skill-archive-reader';

export interface ExtractedArchive {
  manifest: SkillManifest;
}

/**
 * Checks the archive and extracts one package into `staged`: the package at `root` (a path listed by
 * inspectSkillArchive), or, when omitted, the archive's single package (root or one wrapper folder with nothing
 * outside it; otherwise the layout errors). Throws SkillError('validation') with the spec's message; the caller
 * discards the staging directory on any error.
 */
export async function extractSkillArchive(buffer: Buffer, staged: StagedPackage, root?: string): Promise<ExtractedArchive> {
  const open = await openArchive(buffer);
  try {
    let chosen: string;
    if (root !== undefined) {
      if (!open.roots.includes(root)) rejectArchive(ARCHIVE_MESSAGES.layout);
      chosen = root;
    } else if (open.single !== null) {
      chosen = open.single;
    } else if (open.roots.length > 1 || !(open.roots[0] as string).includes('/')) {
      const topLevel = new Set(open.roots.map((r) => r.split('/')[0]));
      if (open.roots.length === 1 || (topLevel.size === 1 && !open.roots.includes(''))) rejectArchive(ARCHIVE_MESSAGES.outside);
      rejectArchive(ARCHIVE_MESSAGES.layout);
    } else {
      rejectArchive(ARCHIVE_MESSAGES.layout);
    }
    return await extractPackage(open, chosen, staged);
  } finally {
    open.zip.close();
  }
}

async function extractPackage(open: OpenArchive, root: string, staged: StagedPackage): Promise<ExtractedArchive> {
  const items = packageMembers(open.members, root);
  if (items.length > ZIP_MAX_ENTRIES) {
    const over = items[ZIP_MAX_ENTRIES] as { member: Member };
    rejectMember(ARCHIVE_MESSAGES.tooManyEntries, over.member.path, ARCHIVE_MESSAGES.entriesOver(ZIP_MAX_ENTRIES), ZIP_MAX_ENTRIES);
  }

  // ---- package paths and the declared total
  interface Planned {
    member: Member;
    rel: string;
  }
  const planned: Planned[] = [];
  let declaredTotal = 0;
  for (const { member, segments } of items) {
    const rel = segments.join('/');
    const first = segments[0] as string;
    if ((first === SKILL_FILE || first === META_FILE) && (segments.length > 1 || member.directory)) {
      rejectMember(ARCHIVE_MESSAGES.invalidPackagePath(rel).split(':')[0] as string, member.path);
    }
    if (segments.length === 1 && !member.directory && isSupportDir(first)) {
      rejectMember(ARCHIVE_MESSAGES.mustBeDirectory(first), member.path);
    }
    if (!member.directory) {
      const limit = rel === SKILL_FILE ? SKILL_MD_MAX_BYTES : PACKAGE_FILE_MAX_BYTES;
      const size = member.entry.uncompressedSize;
      if (size > limit) {
        rejectMember(ARCHIVE_MESSAGES.fileTooLarge(rel).split(':')[0] as string, member.path, ARCHIVE_MESSAGES.sizeOver(size, limit), limit);
      }
      declaredTotal += size;
      if (declaredTotal > ZIP_MAX_EXPANDED_BYTES) {
        rejectMember(
          ARCHIVE_MESSAGES.expandsTooMuch,
          member.path,
          ARCHIVE_MESSAGES.totalOver(declaredTotal, ZIP_MAX_EXPANDED_BYTES),
          ZIP_MAX_EXPANDED_BYTES,
        );
      }
    }
    // the archive's own _meta.json is never extracted: ownership cannot be claimed
    if (rel === META_FILE) continue;
    planned.push({ member, rel });
  }

  // ---- extraction, counting the bytes actually inflated
  let extractedTotal = 0;
  for (const item of planned) {
    if (item.member.directory) {
      await staged.ensureDir(item.rel);
      continue;
    }
    const entry = item.member.entry;
    const limit = item.rel === SKILL_FILE ? SKILL_MD_MAX_BYTES : PACKAGE_FILE_MAX_BYTES;
    let stream;
    try {
      stream = await open.zip.openReadStreamPromise(entry);
    } catch {
      rejectMember(ARCHIVE_MESSAGES.invalid, item.member.path);
    }
    let crc = 0;
    let written: number;
    try {
      written = await staged.writeStream(item.rel, stream, limit, (chunk) => {
        extractedTotal += chunk.length;
        if (extractedTotal > ZIP_MAX_EXPANDED_BYTES) {
          rejectMember(
            ARCHIVE_MESSAGES.expandsTooMuch,
            item.member.path,
            ARCHIVE_MESSAGES.totalOver(extractedTotal, ZIP_MAX_EXPANDED_BYTES),
            ZIP_MAX_EXPANDED_BYTES,
          );
        }
        crc = crc32(chunk, crc);
      });
    } catch (error) {
      stream.destroy();
      if (error instanceof StagingLimitError) {
        rejectMember(
          ARCHIVE_MESSAGES.fileTooLarge(item.rel).split(':')[0] as string,
          item.member.path,
          `it inflates to more than its declared size; the limit is ${limitBytes(limit)} per file`,
          limit,
        );
      }
      if (error instanceof SkillError) throw error;
      rejectMember(ARCHIVE_MESSAGES.invalid, item.member.path);
    }
    if (written !== entry.uncompressedSize || crc !== entry.crc32 >>> 0) {
      rejectMember(ARCHIVE_MESSAGES.invalid, item.member.path, 'its size or CRC-32 does not match the archive directory');
    }
  }

  // ---- SKILL.md
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(await staged.readFile(SKILL_FILE));
  } catch {
    rejectArchive(ARCHIVE_MESSAGES.notUtf8);
  }
  const parsed = parseSkillMarkdown(content);
  if (!parsed.ok) rejectArchive(parsed.error);
  return { manifest: parsed.manifest };
}
