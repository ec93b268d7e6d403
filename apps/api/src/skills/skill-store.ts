/**
 * Skill packages on disk (openspec skills) — the only code that touches the Skill roots and the snapshots. Every
 * publication is atomic: the package is built in a hidden staging directory inside the target root
 * (`.skill-stage.<hex>` / `.skill-import.<hex>`), validated there, then renamed into place; a replace swaps the
 * directories with two renames and removes the old one. Nothing partial is ever visible under a Skill name, and every
 * failure removes what it staged. Snapshots are full copies under `<snapshots>/<source>/<name>/<epoch_ms>-<8 hex>/`.
 *
 * No message produced here contains a host path.
 */
import { isErrorCode, isRecord } from '@cashcode/contracts';
import { createHash, randomBytes } from 'node:crypto';
import * as fsCallback from 'node:fs';
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Logger } from '@nestjs/common';
import type { SkillSource } from '@cashcode/contracts';
import {
  META_FILE,
  PACKAGE_MAX_DEPTH,
  PACKAGE_FILE_MAX_BYTES,
  PACKAGE_MAX_FILES,
  PACKAGE_MAX_TOTAL_BYTES,
  SKILL_FILE,
  SKILL_MD_MAX_BYTES,
  SKILL_MD_MESSAGES,
  SUPPORT_FILE_MAX_BYTES,
  isSafeSegment,
  isSupportDir,
  parseSkillMarkdown,
  type SkillManifest,
} from '@cashcode/skill-format';
import { fsyncDirectory, writeFileAtomic } from '../common/atomic-file';
import {
  copyTreePrivate,
  createPrivateWriteStream,
  mkdirPrivate,
  PRIVATE_DIR_MODE,
  writeFilePrivate,
} from '../common/private-fs';
import { formatEvent } from '../common/log-format';

export interface SkillRoots {
  builtin: string;
  user: string;
  agent: string;
  snapshots: string;
}

/** Server-owned `_meta.json` (openspec skills). */
export interface SkillMeta {
  source: SkillSource;
  enabled: boolean;
  storage_version: 1;
  /** epoch seconds (float) */
  updated_at: number;
  agentCreated: boolean;
  creation_reason?: string;
}

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

/** Names of the hidden working directories inside a root (ignored by the catalog, removed at start). */
const STAGING_PREFIXES = ['.skill-stage.', '.skill-import.', '.skill-old.', '.skill-trash.'];
const VERSION_PATTERN = /^\d{1,16}-[0-9a-f]{8}$/;

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** The first `limit` bytes of a file, streamed (a Skill resource may be megabytes). */
async function readLimited(file: string, limit: number): Promise<Buffer> {
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

function isWithin(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** epoch seconds with milliseconds, like Python's time.time() */
export function epochSeconds(now: Date = new Date()): number {
  return now.getTime() / 1000;
}

export function newVersionId(now: Date = new Date()): string {
  return `${now.getTime()}-${hex(4)}`;
}

/** A snapshot id as given in a URL: a plain version directory name. */
export function isPlausibleVersion(version: string): boolean {
  return (
    version !== '' &&
    !version.includes('..') &&
    !version.includes('/') &&
    !version.includes('\\') &&
    !version.includes('\0') &&
    !path.isAbsolute(version) &&
    !/^[A-Za-z]:/.test(version)
  );
}

export class StagingLimitError extends Error {
  constructor(readonly relPath: string) {
    super(`staged file exceeds its limit: ${relPath}`);
    this.name = 'StagingLimitError';
  }
}

/** A hidden directory in a root where a package is assembled before it is published. */
export class StagedPackage {
  private discarded = false;

  constructor(
    readonly source: SkillSource,
    /** absolute path; never shown to a user */
    readonly dir: string,
  ) {}

  private target(rel: string): string {
    const segments = rel.split('/');
    if (segments.some((segment) => !isSafeSegment(segment))) throw new Error('unsafe staged path');
    const target = path.join(this.dir, ...segments);
    if (!isWithin(this.dir, target) || target === this.dir) throw new Error('unsafe staged path');
    return target;
  }

  async ensureDir(rel: string): Promise<void> {
    await mkdirPrivate(this.target(rel));
  }

  async writeFile(rel: string, data: string | Uint8Array): Promise<void> {
    const target = this.target(rel);
    await mkdirPrivate(path.dirname(target));
    await writeFilePrivate(target, data, 'wx');
  }

  /** Streams a file in, counting the bytes actually written; more than `maxBytes` → StagingLimitError. */
  async writeStream(rel: string, input: Readable, maxBytes: number, onChunk?: (chunk: Buffer) => void): Promise<number> {
    const target = this.target(rel);
    await mkdirPrivate(path.dirname(target));
    let written = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        written += chunk.length;
        if (written > maxBytes) {
          callback(new StagingLimitError(rel));
          return;
        }
        try {
          onChunk?.(chunk);
        } catch (error) {
          callback(error as Error);
          return;
        }
        callback(null, chunk);
      },
    });
    await pipeline(input, counter, createPrivateWriteStream(target, 'wx'));
    return written;
  }

  async removeFile(rel: string): Promise<void> {
    await fs.rm(this.target(rel), { force: true });
  }

  async readFile(rel: string): Promise<Buffer> {
    return fs.readFile(this.target(rel));
  }

  async writeMeta(meta: SkillMeta): Promise<void> {
    await writeFilePrivate(path.join(this.dir, META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  }

  async discard(): Promise<void> {
    if (this.discarded) return;
    this.discarded = true;
    await fs.rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

export class SkillStore {
  private readonly logger = new Logger(SkillStore.name);

  constructor(readonly roots: SkillRoots) {}

  rootOf(source: SkillSource): string {
    return this.roots[source];
  }

  /** Creates the user/agent roots and the snapshots directory; removes staging leftovers of a crash. */
  async prepare(): Promise<void> {
    for (const dir of [this.roots.user, this.roots.agent, this.roots.snapshots]) {
      await mkdirPrivate(dir);
    }
    for (const root of [this.roots.user, this.roots.agent]) {
      for (const entry of await fs.readdir(root, { withFileTypes: true })) {
        if (STAGING_PREFIXES.some((prefix) => entry.name.startsWith(prefix))) {
          await fs.rm(path.join(root, entry.name), { recursive: true, force: true }).catch(() => undefined);
          this.logger.warn(formatEvent('skill.staging.removed', { entry: entry.name }));
        }
      }
    }
  }

  /** The non-hidden directories of a root (a missing root is empty). Symlinks and files are ignored. */
  async listDirectories(source: SkillSource): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(this.rootOf(source), { withFileTypes: true });
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return [];
      throw error;
    }
    return entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name);
  }

  /** Whether a directory (valid or not) of that name exists directly in the root. */
  async directoryExists(source: SkillSource, name: string): Promise<boolean> {
    if (!isSafeSegment(name)) return false;
    try {
      return (await fs.lstat(path.join(this.rootOf(source), name))).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * A cheap fingerprint of a package (directory and SKILL.md stats): the catalog re-reads a package only when it
   * changed. Synchronous, like the package read below (see `readPackageSync`).
   */
  signatureSync(source: SkillSource, directory: string): string {
    const dir = path.join(this.rootOf(source), directory);
    const part = (target: string): string => {
      try {
        const stat = fsCallback.statSync(target, { throwIfNoEntry: false });
        return stat ? `${stat.mtimeMs}:${stat.size}:${stat.ino}` : '-';
      } catch {
        return '-';
      }
    };
    // _meta.json is always replaced by rename (the directory's mtime changes), so two stats suffice
    return `${part(dir)}|${part(path.join(dir, SKILL_FILE))}`;
  }

  async signature(source: SkillSource, directory: string): Promise<string> {
    return this.signatureSync(source, directory);
  }

  /** Reads and validates a package of a root (openspec skills; expected name = the directory name). */
  readPackage(source: SkillSource, directory: string): Promise<PackageReadResult> {
    return Promise.resolve(this.readPackageSync(source, directory));
  }

  /**
   * `readPackage` without the promise, for the catalog's refresh. A package is one small local directory (at most
   * 256 entries, SKILL.md at most 80,000 bytes), so its reads are synchronous: through fs.promises each call cost
   * about 0.3 ms of main-thread time (promise, request object and thread-pool hand-off), nine calls per package, which
   * made a cold refresh of 2,000 packages take 1.4-1.7 s; synchronous calls take a few microseconds each. The catalog
   * reads packages in slices and yields to the event loop between them (skill-catalog.ts `refreshOnce`).
   */
  readPackageSync(source: SkillSource, directory: string): PackageReadResult {
    return this.readPackageAt(source, path.join(this.rootOf(source), directory), directory);
  }

  /** Validates a staged package with the name it will be published under. */
  readStaged(staged: StagedPackage, expectedName: string): Promise<PackageReadResult> {
    return Promise.resolve(this.readPackageAt(staged.source, staged.dir, expectedName));
  }

  private readPackageAt(source: SkillSource, dir: string, expectedName: string): PackageReadResult {
    try {
      return this.readPackageUnsafe(source, dir, expectedName);
    } catch (error) {
      this.logger.warn(formatEvent('skill.package.read_failed', { source, error: (error as Error).name }));
      return { ok: false, error: PACKAGE_MESSAGES.unreadable };
    }
  }

  private readPackageUnsafe(source: SkillSource, dir: string, expectedName: string): PackageReadResult {
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

  /** SKILL.md bytes of a package, or null when it cannot be read. */
  async readSkillFile(source: SkillSource, name: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(path.join(this.rootOf(source), name, SKILL_FILE));
    } catch {
      return null;
    }
  }

  /**
   * A supporting file of a package (already checked with checkSupportPath): must resolve inside the package and be a
   * regular file of at most 200,000 bytes; null otherwise.
   */
  async readResource(source: SkillSource, name: string, rel: string): Promise<Buffer | null> {
    const packageDir = path.join(this.rootOf(source), name);
    try {
      const realPackage = await fs.realpath(packageDir);
      const real = await fs.realpath(path.join(packageDir, ...rel.split('/')));
      if (!isWithin(realPackage, real) || real === realPackage) return null;
      const stat = await fs.stat(real);
      if (!stat.isFile() || stat.size > SUPPORT_FILE_MAX_BYTES) return null;
      const data = await fs.readFile(real);
      return data.length > SUPPORT_FILE_MAX_BYTES ? null : data;
    } catch {
      return null;
    }
  }

  /**
   * The head of a supporting file of a package (already checked with checkSupportPath): its first `maxBytes` bytes
   * and its total size, for files of any size (imports allow large support files); null when it does not resolve
   * to a regular file inside the package.
   */
  async readResourceHead(source: SkillSource, name: string, rel: string, maxBytes = SUPPORT_FILE_MAX_BYTES): Promise<{ data: Buffer; size: number } | null> {
    const packageDir = path.join(this.rootOf(source), name);
    try {
      const realPackage = await fs.realpath(packageDir);
      const real = await fs.realpath(path.join(packageDir, ...rel.split('/')));
      if (!isWithin(realPackage, real) || real === realPackage) return null;
      const stat = await fs.stat(real);
      if (!stat.isFile()) return null;
      const data = await readLimited(real, maxBytes);
      return { data, size: Math.max(stat.size, data.length) };
    } catch {
      return null;
    }
  }

  // ------------------------------------------------------------------------------------------ staging & publication

  /** A fresh hidden staging directory in the root of `source`. */
  async stage(source: SkillSource, kind: 'stage' | 'import' = 'stage'): Promise<StagedPackage> {
    const root = this.rootOf(source);
    await mkdirPrivate(root);
    const dir = path.join(root, `.skill-${kind}.${hex(8)}`);
    await fs.mkdir(dir, { mode: PRIVATE_DIR_MODE });
    await fs.chmod(dir, PRIVATE_DIR_MODE);
    return new StagedPackage(source, dir);
  }

  /** Copies a published package byte-for-byte into a staging directory (symlinks inside are kept as links). */
  async copyInto(staged: StagedPackage, source: SkillSource, name: string): Promise<void> {
    await copyTreePrivate(path.join(this.rootOf(source), name), staged.dir, {
      recursive: true,
      force: true,
      verbatimSymlinks: true,
      preserveTimestamps: false,
    });
  }

  /** Copies a snapshot (with its _meta.json) into a staging directory. */
  async copySnapshotInto(staged: StagedPackage, source: SkillSource, name: string, version: string): Promise<void> {
    await copyTreePrivate(this.snapshotDir(source, name, version), staged.dir, {
      recursive: true,
      force: true,
      verbatimSymlinks: true,
    });
  }

  async readMeta(source: SkillSource, name: string): Promise<Record<string, unknown> | null> {
    try {
      const value: unknown = JSON.parse(await fs.readFile(path.join(this.rootOf(source), name, META_FILE), 'utf8'));
      return isRecord(value) ? value : null;
    } catch {
      return null;
    }
  }

  /** Rewrites _meta.json of a published package atomically. */
  async writeMeta(source: SkillSource, name: string, meta: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(path.join(this.rootOf(source), name, META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  }

  /** Publishes a new package: renames the staging directory to `<root>/<name>`; false when the name is taken. */
  async publishNew(staged: StagedPackage, name: string): Promise<boolean> {
    const target = path.join(this.rootOf(staged.source), name);
    if (await this.pathExists(target)) return false;
    try {
      await fs.rename(staged.dir, target);
    } catch (error) {
      if (isErrorCode(error, 'ENOTEMPTY', 'EEXIST')) return false;
      throw error;
    }
    await fsyncDirectory(this.rootOf(staged.source));
    return true;
  }

  /** Replaces a published package with a staged one (old moved aside, new renamed in, old removed). */
  async publishReplace(staged: StagedPackage, name: string): Promise<void> {
    const root = this.rootOf(staged.source);
    const target = path.join(root, name);
    const aside = path.join(root, `.skill-old.${hex(8)}`);
    await fs.rename(target, aside);
    try {
      await fs.rename(staged.dir, target);
    } catch (error) {
      await fs.rename(aside, target).catch(() => undefined);
      throw error;
    }
    await fsyncDirectory(root);
    await fs.rm(aside, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Removes a published package (moved aside first, so it disappears at once). */
  async remove(source: SkillSource, name: string): Promise<void> {
    const root = this.rootOf(source);
    const aside = path.join(root, `.skill-trash.${hex(8)}`);
    await fs.rename(path.join(root, name), aside);
    await fsyncDirectory(root);
    await fs.rm(aside, { recursive: true, force: true });
  }

  // ------------------------------------------------------------------------------------------ snapshots

  private snapshotDir(source: SkillSource, name: string, version: string): string {
    return path.join(this.roots.snapshots, source, name, version);
  }

  /** Full copy of a published package; returns the version id. */
  async snapshot(source: SkillSource, name: string): Promise<string> {
    const parent = path.join(this.roots.snapshots, source, name);
    await mkdirPrivate(parent);
    const version = newVersionId();
    const temp = path.join(parent, `.tmp-${hex(6)}`);
    try {
      await copyTreePrivate(path.join(this.rootOf(source), name), temp, {
        recursive: true,
        verbatimSymlinks: true,
        errorOnExist: true,
      });
      await fs.rename(temp, path.join(parent, version));
    } catch (error) {
      await fs.rm(temp, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    return version;
  }

  /** Snapshot ids of a package, newest first. */
  async listVersions(source: SkillSource, name: string): Promise<string[]> {
    if (!isSafeSegment(name)) return [];
    try {
      const entries = await fs.readdir(path.join(this.roots.snapshots, source, name), { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory() && VERSION_PATTERN.test(entry.name))
        .map((entry) => entry.name)
        .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    } catch {
      return [];
    }
  }

  async snapshotExists(source: SkillSource, name: string, version: string): Promise<boolean> {
    if (!isPlausibleVersion(version)) return false;
    try {
      return (await fs.lstat(this.snapshotDir(source, name, version))).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * Moves an invalid package out of its root to `<snapshots>/invalid/<source>/<package_id>/<version>` (openspec
   * skills). Returns the snapshot id and an undo function.
   */
  async moveInvalid(
    source: SkillSource,
    directory: string,
    packageId: string,
  ): Promise<{ snapshot: string; undo: () => Promise<void> }> {
    const from = path.join(this.rootOf(source), directory);
    const parent = path.join(this.roots.snapshots, 'invalid', source, packageId);
    await mkdirPrivate(parent);
    const version = newVersionId();
    const to = path.join(parent, version);
    await fs.rename(from, to);
    await fsyncDirectory(this.rootOf(source));
    return {
      snapshot: `invalid/${source}/${packageId}/${version}`,
      undo: async () => {
        await fs.rename(to, from);
      },
    };
  }

  /** Whether `directory` is a real directory directly inside the root (not a symlink, not nested). */
  async isDirectChildDirectory(source: SkillSource, directory: string): Promise<boolean> {
    if (!isSafeSegment(directory)) return false;
    try {
      const stat = await fs.lstat(path.join(this.rootOf(source), directory));
      return stat.isDirectory();
    } catch {
      return false;
    }
  }

  private async pathExists(target: string): Promise<boolean> {
    try {
      await fs.lstat(target);
      return true;
    } catch {
      return false;
    }
  }
}
