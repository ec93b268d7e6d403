/**
 * The member checks every ZIP the server reads shares (a Skill import, `skills/skill-archive-members.ts`; a backup restore,
 * `backup/backup-archive-reader.ts`), read from the central directory before anything is extracted:
 *
 * - the name as stored (the UTF-8 flag and Info-ZIP's unicode path honoured), never decoded by yauzl's own rules;
 * - a legal relative path: no backslash, NUL, absolute or drive-letter path, no empty / `.` / `..` segment, no control
 *   character, no segment longer than 255 bytes;
 * - the member's type from the Unix mode bits of its external attributes: a directory, a regular file, or something
 *   else (a symbolic link, a device, a FIFO), which no caller extracts;
 * - encryption (never supported).
 */
import type { Entry } from 'yauzl';
import { isSafeSegment } from '@cashcode/skill-format';

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

/** The entry's name as stored (UTF-8 flag / Info-ZIP unicode path honoured), backslashes kept. */
export function zipMemberName(yauzl: typeof import('yauzl'), entry: Entry): string {
  const raw = entry.fileName as unknown;
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw), 'utf8');
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, buffer, entry.extraFields, true);
}

export interface ZipMemberPath {
  /** normalised path without a trailing slash */
  path: string;
  segments: string[];
  /** the name ends with `/` */
  directory: boolean;
}

/** The member's path, or null when the name is not a legal relative path (see the file comment). */
export function zipMemberPath(name: string): ZipMemberPath | null {
  if (name === '' || name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    return null;
  }
  const directory = name.endsWith('/');
  const trimmed = directory ? name.slice(0, -1) : name;
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((segment) => !isSafeSegment(segment))) return null;
  return { path: trimmed, segments, directory };
}

/**
 * What the entry's Unix mode says it is: `unknown` when the archive was not made on Unix (or carries no type bits),
 * else `directory`, `file`, `symlink` or `special` (a device, a FIFO, a socket).
 */
export function zipMemberType(entry: Entry): 'unknown' | 'directory' | 'file' | 'symlink' | 'special' {
  const madeByUnix = entry.versionMadeBy >> 8 === 3;
  const fileType = madeByUnix ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
  if (fileType === 0) return 'unknown';
  if (fileType === S_IFDIR) return 'directory';
  if (fileType === S_IFREG) return 'file';
  if (fileType === S_IFLNK) return 'symlink';
  return 'special';
}

/** Traditional PKWARE or strong encryption (general purpose bit 0). */
export function isZipMemberEncrypted(entry: Entry): boolean {
  return (entry.generalPurposeBitFlag & 0x1) !== 0;
}
