/**
 * Reading one Skill package directory and validating it (openspec skills): every entry a safe name, no symlink out of
 * the package, support directories really directories, the file, size and depth limits, SKILL.md UTF-8 with valid
 * frontmatter naming the package, `_meta.json` (if any) JSON. The result is the loaded package or the first broken
 * rule as a message; nothing here writes.
 *
 * The reads are synchronous on purpose (see `SkillStore.readPackageSync`).
 */
import { createHash } from 'node:crypto';
import * as fsCallback from 'node:fs';
import type { Dirent } from 'node:fs';
import * as path from 'node:path';
import { isErrorCode, isRecord, type SkillSource } from '@cashcode/contracts';
import {
  META_FILE,
  PACKAGE_MAX_DEPTH,
  PACKAGE_FILE_MAX_BYTES,
  PACKAGE_MAX_FILES,
  PACKAGE_MAX_TOTAL_BYTES,
  SKILL_FILE,
  SKILL_MD_MAX_BYTES,
  SKILL_MD_MESSAGES,
  isSafeSegment,
  isSupportDir,
  parseSkillMarkdown,
  type SkillManifest,
} from '@cashcode/skill-format';

export interface LoadedPackage {
  source: SkillSource;
  /** the directory name (equals manifest.name) */
  directory: string;
  manifest: SkillManifest;
  body: string;
  content: string;
  /** sha256 hex of SKILL.md */
  hash: string;
  enabled: boolean;
  /** package-relative paths of the other files (sorted; _meta.json excluded) */
  files: string[];
}

export type PackageReadResult = { ok: true; pkg: LoadedPackage } | { ok: false; error: string };

export const PACKAGE_MESSAGES = {
  notDirectory: 'Skill package is not a directory',
  unsupportedEntry: (name: string) => `unsupported package entry: ${name}`,
  symlinkEscapes: (name: string) => `symlink escapes package: ${name}`,
  skillMdNotFound: 'SKILL.md not found',
  notUtf8: 'SKILL.md must be UTF-8',
  invalidMeta: 'invalid _meta.json',
  mustBeDirectory: (dir: string) => `${dir} must be a directory`,
  supportTooLarge: (rel: string) => `supporting file is too large: ${rel}`,
  tooManyFiles: `Skill package contains more than ${PACKAGE_MAX_FILES} files`,
  packageTooLarge: 'Skill package is too large',
  tooDeep: (rel: string) => `Skill package is nested too deeply: ${rel}`,
  unreadable: 'Skill package could not be read',
} as const;

/** The first `limit` bytes of a file, streamed (a Skill resource may be megabytes). */
export async function readLimited(file: string, limit: number): Promise<Buffer> {
  if (limit <= 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of fsCallback.createReadStream(file, { start: 0, end: Math.max(0, limit - 1) })) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The first `limit` bytes of a file, synchronously (`SkillStore.readPackageSync`): one open, usually one read. */
function readLimitedSync(file: string, limit: number): Buffer {
  const fd = fsCallback.openSync(file, 'r');
  try {
    let buffer = Buffer.allocUnsafe(Math.min(limit, 16 * 1024));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length >= limit) break;
        const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 4));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const bytesRead = fsCallback.readSync(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length);
  } finally {
    fsCallback.closeSync(fd);
  }
}

/** Python truthiness of a JSON value (`bool(meta.get("enabled", True))`). */
function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Whether `target` is `root` or inside it. */
export function isWithin(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Reads and validates the package in `dir` under the name it is (or will be) published as. An unexpected file-system
 * error is thrown (the store reports it as `PACKAGE_MESSAGES.unreadable`).
 */
export function readPackageDirectory(source: SkillSource, dir: string, expectedName: string): PackageReadResult {
  const fail = (error: string): PackageReadResult => ({ ok: false, error });
  let rootEntries: Dirent[];
  try {
    rootEntries = fsCallback.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (isErrorCode(error, 'ENOTDIR', 'ENOENT')) return fail(PACKAGE_MESSAGES.notDirectory);
    throw error;
  }
  // realpath only when a symlink has to be checked
  let realDir: string | null = null;
  const packageReal = (): string => (realDir ??= fsCallback.realpathSync(dir));

  // walk the whole package first: entry kinds, symlinks, sizes and limits (one stat per supporting file)
  const files: string[] = [];
  let total = 0;
  let hasSkillFile = false;
  let metaKind: 'none' | 'file' | 'other' = 'none';
  const walk = (current: string, relParts: string[], entries: Dirent[]): string | null => {
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relParts.length === 0 ? entry.name : `${relParts.join('/')}/${entry.name}`;
      const atRoot = relParts.length === 0;
      if (!isSafeSegment(entry.name)) return PACKAGE_MESSAGES.unsupportedEntry(rel);
      const full = path.join(current, entry.name);
      let kind: 'file' | 'dir' | 'other' = entry.isFile() ? 'file' : entry.isDirectory() ? 'dir' : 'other';
      let size: number | null = null;
      if (entry.isSymbolicLink()) {
        let real: string;
        try {
          real = fsCallback.realpathSync(full);
        } catch {
          return PACKAGE_MESSAGES.symlinkEscapes(rel);
        }
        const root = packageReal();
        if (!isWithin(root, real) || real === root) return PACKAGE_MESSAGES.symlinkEscapes(rel);
        const stat = fsCallback.statSync(full);
        if (stat.isDirectory()) return PACKAGE_MESSAGES.unsupportedEntry(rel);
        kind = stat.isFile() ? 'file' : 'other';
        size = stat.size;
      }
      if (atRoot && entry.name === SKILL_FILE) {
        if (kind === 'file') hasSkillFile = true;
        continue;
      }
      if (atRoot && entry.name === META_FILE) {
        metaKind = kind === 'file' ? 'file' : 'other';
        continue;
      }
      if (atRoot && isSupportDir(entry.name) && kind !== 'dir') return PACKAGE_MESSAGES.mustBeDirectory(entry.name);
      if (kind === 'dir') {
        if (relParts.length + 1 >= PACKAGE_MAX_DEPTH) return PACKAGE_MESSAGES.tooDeep(rel);
        const nested = walk(full, [...relParts, entry.name], fsCallback.readdirSync(full, { withFileTypes: true }));
        if (nested) return nested;
        continue;
      }
      if (kind !== 'file') return PACKAGE_MESSAGES.unsupportedEntry(rel);
      size ??= fsCallback.statSync(full).size;
      if (size > PACKAGE_FILE_MAX_BYTES) return PACKAGE_MESSAGES.supportTooLarge(rel);
      files.push(rel);
      total += size;
      if (files.length + 2 > PACKAGE_MAX_FILES) return PACKAGE_MESSAGES.tooManyFiles;
      if (total > PACKAGE_MAX_TOTAL_BYTES) return PACKAGE_MESSAGES.packageTooLarge;
    }
    return null;
  };
  const walkError = walk(dir, [], rootEntries);
  if (walkError) return fail(walkError);
  if (!hasSkillFile) return fail(PACKAGE_MESSAGES.skillMdNotFound);

  // read at most one byte more than the limit: a huge SKILL.md is never loaded whole
  const bytes = readLimitedSync(path.join(dir, SKILL_FILE), SKILL_MD_MAX_BYTES + 1);
  if (bytes.length > SKILL_MD_MAX_BYTES) return fail(SKILL_MD_MESSAGES.tooLarge);
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fail(PACKAGE_MESSAGES.notUtf8);
  }
  const parsed = parseSkillMarkdown(content, { expectedName });
  if (!parsed.ok) return fail(parsed.error);

  let meta: Record<string, unknown> | null = null;
  const metaFound = metaKind as 'none' | 'file' | 'other';
  if (metaFound === 'other') return fail(PACKAGE_MESSAGES.invalidMeta);
  if (metaFound === 'file') {
    try {
      const value: unknown = JSON.parse(readLimitedSync(path.join(dir, META_FILE), 64 * 1024).toString('utf8'));
      if (isRecord(value)) meta = value;
    } catch {
      return fail(PACKAGE_MESSAGES.invalidMeta);
    }
  }
  const enabled = meta === null || !('enabled' in meta) ? true : truthy(meta['enabled']);
  return {
    ok: true,
    pkg: {
      source,
      directory: expectedName,
      manifest: parsed.manifest,
      body: parsed.body,
      content,
      hash: createHash('sha256').update(bytes).digest('hex'),
      enabled,
      files,
    },
  };
}
