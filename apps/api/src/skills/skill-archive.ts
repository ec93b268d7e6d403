/**
 * ZIP import of a Skill package (openspec skills "Requirement: ZIP import"; SECURITY.md "Skill ZIP import"). yauzl is
 * loaded on first use and reads the central directory with lazy entries and raw names; every rule is checked before
 * anything is extracted:
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
import type { Entry, ZipFile } from 'yauzl';
import type { ProblemReason, SkillArchiveCandidate } from '@cashcode/contracts';
import {
  META_FILE,
  PACKAGE_MAX_DEPTH,
  SKILL_FILE,
  SKILL_MD_MAX_BYTES,
  PACKAGE_FILE_MAX_BYTES,
  PACKAGE_MAX_TOTAL_BYTES,
  SKILL_MD_MESSAGES,
  isSafeSegment,
  isSupportDir,
  parseSkillMarkdown,
  type SkillManifest,
} from '@cashcode/skill-format';
import { SkillError } from './skills.errors';
import { StagingLimitError, type StagedPackage } from './skill-publication';

export const ZIP_MAX_BYTES = 10 * 1024 * 1024;
/** entries of one archive (a repository download holding several Skills) */
export const ZIP_MAX_ARCHIVE_ENTRIES = 4096;
/** entries of the package imported from it */
export const ZIP_MAX_ENTRIES = 256;
export const ZIP_MAX_EXPANDED_BYTES = PACKAGE_MAX_TOTAL_BYTES;
/** macOS Finder's resource-fork folder, skipped (never extracted) */
const MACOS_RESOURCE_DIR = '__MACOSX';
/** packages listed in the "several Skills" answer */
const CANDIDATES_MAX = 64;

/** `242,277 bytes` */
function bytes(n: number): string {
  return `${n.toLocaleString('en-US')} bytes`;
}

/** `5,242,880 bytes (5 MiB)` */
function limitBytes(n: number): string {
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

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

interface Member {
  entry: Entry;
  /** normalised path without a trailing slash */
  path: string;
  segments: string[];
  directory: boolean;
}

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

function reject(message: string): never {
  throw new SkillError('validation', message, 'file', { extensions: { reason: archiveReason(message) } });
}

/** A per-member refusal: the member in the message and as the problem's `member`, with the limit when one applies. */
function rejectMember(rule: string, member: string, why?: string, limit?: number): never {
  throw new SkillError('validation', ARCHIVE_MESSAGES.member(rule, member, why), 'file', {
    extensions: { reason: archiveReason(rule), member, ...(limit !== undefined ? { limit } : {}) },
  });
}

/** The entry's name as stored (UTF-8 flag / Info-ZIP unicode path honoured), backslashes kept. */
function rawName(yauzl: typeof import('yauzl'), entry: Entry): string {
  const raw = entry.fileName as unknown;
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw), 'utf8');
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, buffer, entry.extraFields, true);
}

function checkMemberName(name: string): { path: string; segments: string[]; directory: boolean } {
  const illegal = (why?: string): never => rejectMember(ARCHIVE_MESSAGES.illegalPath, name, why);
  if (name === '' || name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    illegal();
  }
  const directory = name.endsWith('/');
  const trimmed = directory ? name.slice(0, -1) : name;
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((segment) => !isSafeSegment(segment))) illegal();
  if (segments.length > PACKAGE_MAX_DEPTH + 1) illegal(`the limit is ${PACKAGE_MAX_DEPTH} folders deep`);
  return { path: trimmed, segments, directory };
}

async function readEntries(zip: ZipFile): Promise<Entry[]> {
  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve());
    zip.once('error', (error: Error) => reject(error));
    zip.readEntry();
  });
  return entries;
}

export interface ExtractedArchive {
  manifest: SkillManifest;
}

/** A checked archive: its members and the packages (folders holding a SKILL.md) found in it. */
export interface InspectedArchive {
  candidates: SkillArchiveCandidate[];
  /** the package imported without a selection (root or single wrapper, nothing outside); null when a selection is needed */
  single: string | null;
}

interface OpenArchive {
  yauzl: typeof import('yauzl');
  zip: ZipFile;
  members: Member[];
  /** package roots ('' = archive root) */
  roots: string[];
  single: string | null;
}

async function openArchive(buffer: Buffer): Promise<OpenArchive> {
  if (buffer.length < 4 || buffer.length > ZIP_MAX_BYTES) reject(ARCHIVE_MESSAGES.invalidOrOversized);
  if (buffer[0] !== 0x50 || buffer[1] !== 0x4b) reject(ARCHIVE_MESSAGES.invalid);
  const yauzl = await import('yauzl');
  let zip: ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buffer, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: false,
      strictFileNames: true,
      autoClose: false,
    });
  } catch {
    reject(ARCHIVE_MESSAGES.invalid);
  }
  try {
    return { yauzl, zip, ...(await checkMembers(yauzl, zip)) };
  } catch (error) {
    zip.close();
    throw error;
  }
}

async function checkMembers(
  yauzl: typeof import('yauzl'),
  zip: ZipFile,
): Promise<{ members: Member[]; roots: string[]; single: string | null }> {
  if (zip.entryCount === 0) reject(ARCHIVE_MESSAGES.empty);
  if (zip.entryCount > ZIP_MAX_ARCHIVE_ENTRIES) {
    throw new SkillError(
      'validation',
      `${ARCHIVE_MESSAGES.tooManyEntries}: ${zip.entryCount.toLocaleString('en-US')}; ${ARCHIVE_MESSAGES.entriesOver(ZIP_MAX_ARCHIVE_ENTRIES)}`,
      'file',
      { extensions: { reason: 'archive_too_many_entries', limit: ZIP_MAX_ARCHIVE_ENTRIES } },
    );
  }
  let entries: Entry[];
  try {
    entries = await readEntries(zip);
  } catch {
    reject(ARCHIVE_MESSAGES.invalid);
  }
  if (entries.length === 0) reject(ARCHIVE_MESSAGES.empty);

  // ---- per entry
  const members: Member[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const name = rawName(yauzl, entry);
    const { path, segments, directory } = checkMemberName(name);
    const madeByUnix = entry.versionMadeBy >> 8 === 3;
    const fileType = madeByUnix ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
    if (directory && fileType !== 0 && fileType !== S_IFDIR) rejectMember(ARCHIVE_MESSAGES.unsupportedMember, name);
    if (!directory && fileType !== 0 && fileType !== S_IFREG) rejectMember(ARCHIVE_MESSAGES.symlinkOrSpecial, name);
    if ((entry.generalPurposeBitFlag & 0x1) !== 0) rejectMember(ARCHIVE_MESSAGES.encrypted, name);
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
  if (roots.length === 0) reject(ARCHIVE_MESSAGES.layout);
  roots.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // listed by path
  let single: string | null = null;
  if (roots.length === 1) {
    const only = roots[0] as string;
    if (only === '') single = '';
    else if (!only.includes('/') && relevant.every((member) => member.segments[0] === only)) single = only;
  }
  return { members: relevant, roots, single };
}

function packageMembers(members: readonly Member[], root: string): { member: Member; segments: string[] }[] {
  const depth = root === '' ? 0 : root.split('/').length;
  return members
    .filter((member) => root === '' || member.path === root || member.path.startsWith(`${root}/`))
    .map((member) => ({ member, segments: member.segments.slice(depth) }))
    .filter((item) => item.segments.length > 0);
}

async function readMemberText(zip: ZipFile, entry: Entry, limit: number): Promise<string | null> {
  if (entry.uncompressedSize > limit) return null;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        stream.destroy();
        return null;
      }
      chunks.push(chunk);
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return null;
  }
}

/**
 * Checks the archive's members and lists the packages in it with their frontmatter name (openspec skills
 * "Requirement: ZIP import"); nothing is extracted.
 */
export async function inspectSkillArchive(buffer: Buffer): Promise<InspectedArchive> {
  const open = await openArchive(buffer);
  try {
    const candidates: SkillArchiveCandidate[] = [];
    for (const root of open.roots.slice(0, CANDIDATES_MAX)) {
      const file = open.members.find((member) => member.path === (root === '' ? SKILL_FILE : `${root}/${SKILL_FILE}`));
      const text = file ? await readMemberText(open.zip, file.entry, SKILL_MD_MAX_BYTES) : null;
      if (text === null) {
        candidates.push({ name: null, path: root, description: null, error: SKILL_MD_MESSAGES.tooLarge });
        continue;
      }
      const parsed = parseSkillMarkdown(text);
      candidates.push(
        parsed.ok
          ? { name: parsed.manifest.name, path: root, description: parsed.manifest.description, error: null }
          : { name: null, path: root, description: null, error: parsed.error },
      );
    }
    return { candidates, single: open.single };
  } finally {
    open.zip.close();
  }
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
      if (!open.roots.includes(root)) reject(ARCHIVE_MESSAGES.layout);
      chosen = root;
    } else if (open.single !== null) {
      chosen = open.single;
    } else if (open.roots.length > 1 || !(open.roots[0] as string).includes('/')) {
      const topLevel = new Set(open.roots.map((r) => r.split('/')[0]));
      if (open.roots.length === 1 || (topLevel.size === 1 && !open.roots.includes(''))) reject(ARCHIVE_MESSAGES.outside);
      reject(ARCHIVE_MESSAGES.layout);
    } else {
      reject(ARCHIVE_MESSAGES.layout);
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
    reject(ARCHIVE_MESSAGES.notUtf8);
  }
  const parsed = parseSkillMarkdown(content);
  if (!parsed.ok) reject(parsed.error);
  return { manifest: parsed.manifest };
}
