/**
 * Skill package layout rules shared by the API (store, ZIP import, skill tools) and the console: reserved root files,
 * the support directories a Skill package may hold (openspec skills), and package-relative paths.
 *
 * Besides `references/`, `templates/`, `scripts/` and `assets/`, a package may hold other files and folders (e.g.
 * `LICENSE.txt`, root-level `*.md`, `examples/`) so that Agent Skills packages import unchanged. Every
 * path must be package-relative (no absolute or drive-letter path, no backslash, no empty, `.` or `..` segment) and
 * every segment a plain name (no control characters, at most 255 UTF-8 bytes). The size limits are the same for all
 * supporting files.
 */
import { utf8ByteLength } from './text-length';

export const SKILL_FILE = 'SKILL.md';
export const META_FILE = '_meta.json';
export const SUPPORT_DIRS = ['references', 'templates', 'scripts', 'assets'] as const;
export type SupportDir = (typeof SUPPORT_DIRS)[number];

/** bytes of one text support file written through create/replace (`support_files`, agent_skill_manage) */
export const SUPPORT_FILE_MAX_BYTES = 200_000;
/** bytes of any file of a package other than SKILL.md (imported packages hold schemas, fonts, binaries) */
export const PACKAGE_FILE_MAX_BYTES = 5 * 1024 * 1024;
/** files in one package (SKILL.md and _meta.json included) */
export const PACKAGE_MAX_FILES = 256;
/** bytes of all files of one package */
export const PACKAGE_MAX_TOTAL_BYTES = 20 * 1024 * 1024;
/** directory depth below the package root */
export const PACKAGE_MAX_DEPTH = 16;
/** support files of one create/replace request (agent_skill_manage, REST) */
export const SUPPORT_FILES_MAX = 64;
export const SEGMENT_MAX_BYTES = 255;

export const PATH_MESSAGES = {
  packageRelative: 'support path must be package-relative',
  reserved: 'support path must not be SKILL.md or _meta.json',
  unsupportedCharacters: 'support path contains unsupported characters',
  tooDeep: 'support path is nested too deeply',
  mustBeDirectory: (dir: string) => `${dir} must be a directory`,
} as const;

const CONTROL = /\p{Cc}/u;
const DRIVE_LETTER = /^[A-Za-z]:/;

export function isSupportDir(name: string): name is SupportDir {
  return (SUPPORT_DIRS as readonly string[]).includes(name);
}

/** Whether one path segment is a plain, portable name. */
export function isSafeSegment(segment: string): boolean {
  return (
    segment !== '' &&
    segment !== '.' &&
    segment !== '..' &&
    !segment.includes('/') &&
    !segment.includes('\\') &&
    !CONTROL.test(segment) &&
    utf8ByteLength(segment) <= SEGMENT_MAX_BYTES
  );
}

export type SupportPathResult = { ok: true; path: string; segments: string[] } | { ok: false; error: string };

/**
 * Checks a package-relative path of a supporting file (REST `support_files`, `agent_skill_manage`,
 * `skill_read_resource`). `SKILL.md` and `_meta.json` at the root are reserved; a support directory name is not a
 * file.
 */
export function checkSupportPath(path: string): SupportPathResult {
  const fail = (error: string): SupportPathResult => ({ ok: false, error });
  if (typeof path !== 'string' || path === '' || path.includes('\0')) return fail(PATH_MESSAGES.packageRelative);
  if (path.includes('\\') || path.startsWith('/') || DRIVE_LETTER.test(path)) return fail(PATH_MESSAGES.packageRelative);
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    return fail(PATH_MESSAGES.packageRelative);
  }
  if (segments.some((segment) => !isSafeSegment(segment))) return fail(PATH_MESSAGES.unsupportedCharacters);
  if (segments.length > PACKAGE_MAX_DEPTH) return fail(PATH_MESSAGES.tooDeep);
  const first = segments[0] as string;
  if (first === SKILL_FILE || first === META_FILE) return fail(PATH_MESSAGES.reserved);
  if (segments.length === 1 && isSupportDir(first)) return fail(PATH_MESSAGES.mustBeDirectory(first));
  return { ok: true, path: segments.join('/'), segments };
}
