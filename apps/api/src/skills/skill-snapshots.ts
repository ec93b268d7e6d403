/**
 * Skill snapshots: full copies of a package taken before it is replaced, rolled back or deleted, under
 * `<snapshots>/<source>/<name>/<epoch_ms>-<8 hex>/` (newest first by name), and quarantined invalid packages under
 * `<snapshots>/invalid/<source>/<package_id>/<version>`. A rollback copies a snapshot back into a staging directory;
 * the caller publishes it like any edit.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SkillSource } from '@cashcode/contracts';
import { isSafeSegment } from '@cashcode/skill-format';
import { fsyncDirectory } from '../common/atomic-file';
import { copyTreePrivate, mkdirPrivate } from '../common/private-fs';
import { randomHex, type StagedPackage } from './skill-publication';

const VERSION_PATTERN = /^\d{1,16}-[0-9a-f]{8}$/;

/** A new snapshot id: `<epoch_ms>-<8 hex>` (sorted by name, newest last). */
export function newVersionId(now: Date = new Date()): string {
  return `${now.getTime()}-${randomHex(4)}`;
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

export class SkillSnapshots {
  constructor(
    /** the snapshots directory */
    private readonly snapshotsRoot: string,
    /** the root directory of a source's packages */
    private readonly rootOf: (source: SkillSource) => string,
  ) {}

  private versionDir(source: SkillSource, name: string, version: string): string {
    return path.join(this.snapshotsRoot, source, name, version);
  }

  /** Full copy of a published package; returns the version id. */
  async snapshot(source: SkillSource, name: string): Promise<string> {
    const parent = path.join(this.snapshotsRoot, source, name);
    await mkdirPrivate(parent);
    const version = newVersionId();
    const temp = path.join(parent, `.tmp-${randomHex(6)}`);
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
      const entries = await fs.readdir(path.join(this.snapshotsRoot, source, name), { withFileTypes: true });
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
      return (await fs.lstat(this.versionDir(source, name, version))).isDirectory();
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
    const parent = path.join(this.snapshotsRoot, 'invalid', source, packageId);
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


  /** Copies a snapshot (with its _meta.json) into a staging directory. */
  async copyInto(staged: StagedPackage, source: SkillSource, name: string, version: string): Promise<void> {
    await copyTreePrivate(this.versionDir(source, name, version), staged.dir, {
      recursive: true,
      force: true,
      verbatimSymlinks: true,
    });
  }
}
