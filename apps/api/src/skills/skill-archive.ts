/**
 * ZIP import of a Skill package (openspec skills "Requirement: ZIP import"; SECURITY.md "Skill ZIP import"). yauzl is
 * loaded on first use and reads the central directory with lazy entries and raw names; every rule is checked before
 * anything is extracted:
 *
 * - archive: 4 bytes..10 MiB, starts with `PK`, parses; 1..256 entries;
 * - per entry, in order: legal name (no backslash, NUL, absolute or drive-letter path, no empty/`.`/`..` segment, no
 *   control character), directory entries really directories, files regular (no symlink / device), not encrypted, no
 *   case-insensitive duplicate (`a` vs `a/` too), declared size ≤ 200,000, cumulative declared size ≤ 20 MiB; then no
 *   file that is also a directory of another entry;
 * - layout: `SKILL.md` at the root or in exactly one top-level directory, nothing outside it (a macOS `__MACOSX/`
 *   resource-fork folder is ignored); package paths (`SKILL.md` / `_meta.json` only as root files, a support directory
 *   never a file, SKILL.md ≤ 80,000 declared);
 * - extraction into the hidden staging directory counts the bytes actually inflated (per-file and total limits, size
 *   and CRC-32 must match the declaration); the archive's own root `_meta.json` is never extracted;
 * - SKILL.md must be UTF-8 with valid frontmatter.
 *
 * Nothing in the archive is executed; the caller publishes the staged directory or discards it.
 */
import { crc32 } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import {
  META_FILE,
  PACKAGE_MAX_DEPTH,
  SKILL_FILE,
  SKILL_MD_MAX_BYTES,
  SUPPORT_FILE_MAX_BYTES,
  isSafeSegment,
  isSupportDir,
  parseSkillMarkdown,
  type SkillManifest,
} from '@cashcode/skill-format';
import { SkillError } from './skills.errors';
import { StagingLimitError, type StagedPackage } from './skill-store';

export const ZIP_MAX_BYTES = 10 * 1024 * 1024;
export const ZIP_MAX_ENTRIES = 256;
export const ZIP_MAX_EXPANDED_BYTES = 20 * 1024 * 1024;
/** macOS Finder's resource-fork folder, skipped (never extracted) */
const MACOS_RESOURCE_DIR = '__MACOSX';

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

function reject(message: string): never {
  throw new SkillError('validation', message, 'file');
}

/** The entry's name as stored (UTF-8 flag / Info-ZIP unicode path honoured), backslashes kept. */
function rawName(yauzl: typeof import('yauzl'), entry: Entry): string {
  const raw = entry.fileName as unknown;
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw), 'utf8');
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, buffer, entry.extraFields, true);
}

function checkMemberName(name: string): { path: string; segments: string[]; directory: boolean } {
  if (name === '' || name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    reject(ARCHIVE_MESSAGES.illegalPath);
  }
  const directory = name.endsWith('/');
  const trimmed = directory ? name.slice(0, -1) : name;
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((segment) => !isSafeSegment(segment))) reject(ARCHIVE_MESSAGES.illegalPath);
  if (segments.length > PACKAGE_MAX_DEPTH + 1) reject(ARCHIVE_MESSAGES.illegalPath);
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

/**
 * Checks the archive and extracts the package into `staged`. Throws SkillError('validation') with the spec's message;
 * the caller discards the staging directory on any error.
 */
export async function extractSkillArchive(buffer: Buffer, staged: StagedPackage): Promise<ExtractedArchive> {
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
    return await extractFrom(yauzl, zip, staged);
  } finally {
    zip.close();
  }
}

async function extractFrom(yauzl: typeof import('yauzl'), zip: ZipFile, staged: StagedPackage): Promise<ExtractedArchive> {
  if (zip.entryCount === 0) reject(ARCHIVE_MESSAGES.empty);
  if (zip.entryCount > ZIP_MAX_ENTRIES) reject(ARCHIVE_MESSAGES.tooManyEntries);
  let entries: Entry[];
  try {
    entries = await readEntries(zip);
  } catch {
    reject(ARCHIVE_MESSAGES.invalid);
  }
  if (entries.length === 0) reject(ARCHIVE_MESSAGES.empty);
  if (entries.length > ZIP_MAX_ENTRIES) reject(ARCHIVE_MESSAGES.tooManyEntries);

  // ---- per entry
  const members: Member[] = [];
  const seen = new Set<string>();
  let declaredTotal = 0;
  for (const entry of entries) {
    const { path, segments, directory } = checkMemberName(rawName(yauzl, entry));
    const madeByUnix = entry.versionMadeBy >> 8 === 3;
    const fileType = madeByUnix ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
    if (directory && fileType !== 0 && fileType !== S_IFDIR) reject(ARCHIVE_MESSAGES.unsupportedMember);
    if (!directory && fileType !== 0 && fileType !== S_IFREG) reject(ARCHIVE_MESSAGES.symlinkOrSpecial);
    if ((entry.generalPurposeBitFlag & 0x1) !== 0) reject(ARCHIVE_MESSAGES.encrypted);
    const key = path.toLowerCase();
    if (seen.has(key)) reject(ARCHIVE_MESSAGES.duplicates);
    seen.add(key);
    if (!directory) {
      if (entry.uncompressedSize > SUPPORT_FILE_MAX_BYTES) reject(ARCHIVE_MESSAGES.memberTooLarge);
      declaredTotal += entry.uncompressedSize;
      if (declaredTotal > ZIP_MAX_EXPANDED_BYTES) reject(ARCHIVE_MESSAGES.expandsTooMuch);
    }
    members.push({ entry, path, segments, directory });
  }
  const parentDirs = new Set<string>();
  for (const member of members) {
    for (let i = 1; i < member.segments.length; i++) parentDirs.add(member.segments.slice(0, i).join('/').toLowerCase());
  }
  for (const member of members) {
    if (!member.directory && parentDirs.has(member.path.toLowerCase())) reject(ARCHIVE_MESSAGES.fileDirConflict);
  }

  // ---- layout
  const relevant = members.filter((member) => member.segments[0] !== MACOS_RESOURCE_DIR);
  let wrapper: string | null = null;
  if (!relevant.some((member) => !member.directory && member.path === SKILL_FILE)) {
    const candidates = new Set(
      relevant
        .filter((member) => !member.directory && member.segments.length === 2 && member.segments[1] === SKILL_FILE)
        .map((member) => member.segments[0] as string),
    );
    if (candidates.size !== 1) reject(ARCHIVE_MESSAGES.layout);
    wrapper = [...candidates][0] as string;
    if (relevant.some((member) => member.segments[0] !== wrapper)) reject(ARCHIVE_MESSAGES.outside);
  }

  // ---- package paths
  interface Planned {
    member: Member;
    rel: string;
    segments: string[];
  }
  const planned: Planned[] = [];
  for (const member of relevant) {
    const segments = wrapper === null ? member.segments : member.segments.slice(1);
    if (segments.length === 0) continue; // the wrapper directory itself
    const rel = segments.join('/');
    const first = segments[0] as string;
    if ((first === SKILL_FILE || first === META_FILE) && (segments.length > 1 || member.directory)) {
      reject(ARCHIVE_MESSAGES.invalidPackagePath(rel));
    }
    if (segments.length === 1 && !member.directory && isSupportDir(first)) reject(ARCHIVE_MESSAGES.mustBeDirectory(first));
    const limit = rel === SKILL_FILE ? SKILL_MD_MAX_BYTES : SUPPORT_FILE_MAX_BYTES;
    if (!member.directory && member.entry.uncompressedSize > limit) reject(ARCHIVE_MESSAGES.fileTooLarge(rel));
    // the archive's own _meta.json is never extracted: ownership cannot be claimed
    if (rel === META_FILE) continue;
    planned.push({ member, rel, segments });
  }

  // ---- extraction, counting the bytes actually inflated
  let extractedTotal = 0;
  for (const item of planned) {
    if (item.member.directory) {
      await staged.ensureDir(item.rel);
      continue;
    }
    const entry = item.member.entry;
    const limit = item.rel === SKILL_FILE ? SKILL_MD_MAX_BYTES : SUPPORT_FILE_MAX_BYTES;
    let stream;
    try {
      stream = await zip.openReadStreamPromise(entry);
    } catch {
      reject(ARCHIVE_MESSAGES.invalid);
    }
    let crc = 0;
    let written: number;
    try {
      written = await staged.writeStream(item.rel, stream, limit, (chunk) => {
        extractedTotal += chunk.length;
        if (extractedTotal > ZIP_MAX_EXPANDED_BYTES) throw new SkillError('validation', ARCHIVE_MESSAGES.expandsTooMuch, 'file');
        crc = crc32(chunk, crc);
      });
    } catch (error) {
      stream.destroy();
      if (error instanceof StagingLimitError) reject(ARCHIVE_MESSAGES.fileTooLarge(item.rel));
      if (error instanceof SkillError) throw error;
      reject(ARCHIVE_MESSAGES.invalid);
    }
    if (written !== entry.uncompressedSize || crc !== entry.crc32 >>> 0) reject(ARCHIVE_MESSAGES.invalid);
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
