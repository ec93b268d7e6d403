/**
 * Writing Skill packages: a package is assembled in a hidden staging directory inside its target root
 * (`.skill-stage.<hex>` / `.skill-import.<hex>`), validated there by the caller, then published with a rename; a
 * replace swaps the directories with two renames and removes the old one, a removal moves the package aside first.
 * Nothing partial is ever visible under a Skill name, and a crash leaves only hidden directories, which
 * `removeStagingLeftovers` clears at the next start.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isErrorCode, type SkillSource } from '@cashcode/contracts';
import { META_FILE, isSafeSegment } from '@cashcode/skill-format';
import { fsyncDirectory } from '../common/atomic-file';
import {
  copyTreePrivate,
  createPrivateWriteStream,
  mkdirPrivate,
  PRIVATE_DIR_MODE,
  writeFilePrivate,
} from '../common/private-fs';
import { isWithin } from './skill-package-reader';

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

/** Names of the hidden working directories inside a root (ignored by the catalog, removed at start). */
const STAGING_PREFIXES = ['.skill-stage.', '.skill-import.', '.skill-old.', '.skill-trash.'];

/** `bytes` random bytes as hex, for the names of hidden directories and snapshot ids. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** epoch seconds with milliseconds, like Python's time.time() */
export function epochSeconds(now: Date = new Date()): number {
  return now.getTime() / 1000;
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

/** A fresh hidden staging directory in `root` for a package of `source`. */
export async function createStage(root: string, source: SkillSource, kind: 'stage' | 'import'): Promise<StagedPackage> {
  await mkdirPrivate(root);
  const dir = path.join(root, `.skill-${kind}.${randomHex(8)}`);
  await fs.mkdir(dir, { mode: PRIVATE_DIR_MODE });
  await fs.chmod(dir, PRIVATE_DIR_MODE);
  return new StagedPackage(source, dir);
}

/** Copies a package directory byte-for-byte into a staging directory (symlinks inside are kept as links). */
export async function copyPackageInto(staged: StagedPackage, packageDir: string): Promise<void> {
  await copyTreePrivate(packageDir, staged.dir, {
    recursive: true,
    force: true,
    verbatimSymlinks: true,
    preserveTimestamps: false,
  });
}

/** Publishes a new package: renames the staging directory to `<root>/<name>`; false when the name is taken. */
export async function publishNewPackage(root: string, staged: StagedPackage, name: string): Promise<boolean> {
  const target = path.join(root, name);
  if (await pathExists(target)) return false;
  try {
    await fs.rename(staged.dir, target);
  } catch (error) {
    if (isErrorCode(error, 'ENOTEMPTY', 'EEXIST')) return false;
    throw error;
  }
  await fsyncDirectory(root);
  return true;
}

/** Replaces a published package with a staged one (old moved aside, new renamed in, old removed). */
export async function publishReplacePackage(root: string, staged: StagedPackage, name: string): Promise<void> {
  const target = path.join(root, name);
  const aside = path.join(root, `.skill-old.${randomHex(8)}`);
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
export async function removePackage(root: string, name: string): Promise<void> {
  const aside = path.join(root, `.skill-trash.${randomHex(8)}`);
  await fs.rename(path.join(root, name), aside);
  await fsyncDirectory(root);
  await fs.rm(aside, { recursive: true, force: true });
}

/** Removes the hidden working directories a crash left in `root`, calling `onRemoved` with each name. */
export async function removeStagingLeftovers(root: string, onRemoved: (entry: string) => void): Promise<void> {
  for (const entry of await fs.readdir(root, { withFileTypes: true })) {
    if (STAGING_PREFIXES.some((prefix) => entry.name.startsWith(prefix))) {
      await fs.rm(path.join(root, entry.name), { recursive: true, force: true }).catch(() => undefined);
      onRemoved(entry.name);
    }
  }
}

async function pathExists(target: string): Promise<boolean> {
  try {
    await fs.lstat(target);
    return true;
  } catch {
    return false;
  }
}
