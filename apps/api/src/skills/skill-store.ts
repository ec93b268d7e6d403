/**
 * Skill packages on disk (openspec skills) — the only code that touches the Skill roots and the snapshots, and the one
 * object the Skills services hold for them. This file finds and reads packages (the validation of one package is
 * `skill-package-reader.ts`); writing goes through `skill-publication.ts` (atomic staging and publication) and versions
 * through `skill-snapshots.ts`, which the store's methods of the same names call with the right root.
 *
 * No message produced here contains a host path.
 */
import { isErrorCode, isRecord } from '@cashcode/contracts';
import * as fsCallback from 'node:fs';
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import { Logger } from '@nestjs/common';
import type { SkillSource } from '@cashcode/contracts';
import { META_FILE, SKILL_FILE, SUPPORT_FILE_MAX_BYTES, isSafeSegment } from '@cashcode/skill-format';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { formatEvent } from '../common/log-format';
import {
  PACKAGE_MESSAGES,
  isWithin,
  readLimited,
  readPackageDirectory,
  type PackageReadResult,
} from './skill-package-reader';
import {
  copyPackageInto,
  createStage,
  publishNewPackage,
  publishReplacePackage,
  removePackage,
  removeStagingLeftovers,
  type StagedPackage,
} from './skill-publication';
import { SkillSnapshots } from './skill-snapshots';

export interface SkillRoots {
  builtin: string;
  user: string;
  agent: string;
  snapshots: string;
}

export class SkillStore {
  private readonly logger = new Logger(SkillStore.name);
  private readonly snapshots: SkillSnapshots;

  constructor(readonly roots: SkillRoots) {
    this.snapshots = new SkillSnapshots(roots.snapshots, (source) => this.rootOf(source));
  }

  rootOf(source: SkillSource): string {
    return this.roots[source];
  }

  /** Creates the user/agent roots and the snapshots directory; removes staging leftovers of a crash. */
  async prepare(): Promise<void> {
    for (const dir of [this.roots.user, this.roots.agent, this.roots.snapshots]) {
      await mkdirPrivate(dir);
    }
    for (const root of [this.roots.user, this.roots.agent]) {
      await removeStagingLeftovers(root, (entry) => {
        this.logger.warn(formatEvent('skill.staging.removed', { entry }));
      });
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
   * 256 entries, SKILL.md at most 80,000 bytes), so its reads are synchronous: each fs.promises call costs a promise,
   * a request object and a thread-pool hand-off, many times the read itself, and a cold refresh reads every package.
   * The catalog reads packages in slices and yields to the event loop between them (skill-catalog.ts `refreshOnce`).
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
      return readPackageDirectory(source, dir, expectedName);
    } catch (error) {
      this.logger.warn(formatEvent('skill.package.read_failed', { source, error: (error as Error).name }));
      return { ok: false, error: PACKAGE_MESSAGES.unreadable };
    }
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

  /** The parsed `_meta.json` of a published package, or null when it is missing or not a JSON object. */
  async readMeta(source: SkillSource, name: string): Promise<Record<string, unknown> | null> {
    try {
      const value: unknown = JSON.parse(await fs.readFile(path.join(this.rootOf(source), name, META_FILE), 'utf8'));
      return isRecord(value) ? value : null;
    } catch {
      return null;
    }
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

  // ------------------------------------------------------------------------------------------ writing (skill-publication.ts)

  /** A fresh hidden staging directory in the root of `source`. */
  stage(source: SkillSource, kind: 'stage' | 'import' = 'stage'): Promise<StagedPackage> {
    return createStage(this.rootOf(source), source, kind);
  }

  /** Copies a published package byte-for-byte into a staging directory (symlinks inside are kept as links). */
  copyInto(staged: StagedPackage, source: SkillSource, name: string): Promise<void> {
    return copyPackageInto(staged, path.join(this.rootOf(source), name));
  }

  /** Rewrites _meta.json of a published package atomically. */
  async writeMeta(source: SkillSource, name: string, meta: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(path.join(this.rootOf(source), name, META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  }


  /** Publishes a new package: renames the staging directory to `<root>/<name>`; false when the name is taken. */
  publishNew(staged: StagedPackage, name: string): Promise<boolean> {
    return publishNewPackage(this.rootOf(staged.source), staged, name);
  }

  /** Replaces a published package with a staged one (old moved aside, new renamed in, old removed). */
  publishReplace(staged: StagedPackage, name: string): Promise<void> {
    return publishReplacePackage(this.rootOf(staged.source), staged, name);
  }

  /** Removes a published package (moved aside first, so it disappears at once). */
  remove(source: SkillSource, name: string): Promise<void> {
    return removePackage(this.rootOf(source), name);
  }

  // ------------------------------------------------------------------------------------------ versions (skill-snapshots.ts)

  /** Full copy of a published package; returns the version id. */
  snapshot(source: SkillSource, name: string): Promise<string> {
    return this.snapshots.snapshot(source, name);
  }

  /** Snapshot ids of a package, newest first. */
  listVersions(source: SkillSource, name: string): Promise<string[]> {
    return this.snapshots.listVersions(source, name);
  }

  snapshotExists(source: SkillSource, name: string, version: string): Promise<boolean> {
    return this.snapshots.snapshotExists(source, name, version);
  }

  /** Copies a snapshot (with its _meta.json) into a staging directory. */
  copySnapshotInto(staged: StagedPackage, source: SkillSource, name: string, version: string): Promise<void> {
    return this.snapshots.copyInto(staged, source, name, version);
  }

  /**
   * Moves an invalid package out of its root to `<snapshots>/invalid/<source>/<package_id>/<version>` (openspec
   * skills). Returns the snapshot id and an undo function.
   */
  moveInvalid(source: SkillSource, directory: string, packageId: string): Promise<{ snapshot: string; undo: () => Promise<void> }> {
    return this.snapshots.moveInvalid(source, directory, packageId);
  }
}
