/**
 * `npm run restore -- <archive> [--force]` (openspec backup "Requirement: Restore into an empty data directory"):
 *
 * 1. the archive is checked whole before anything is written (backup-archive-reader.ts): members, manifest, format;
 * 2. the data directory's lock is taken (a running server makes the restore refuse, like a second server);
 * 3. the targets (the data directory, and MEMORY_DIR and the workspace's `attachments/` when they live elsewhere) must
 *    be empty — only the lock and its socket may be there — unless `force`;
 * 4. every member is extracted into a staging folder inside the data directory and checked against its size and
 *    SHA-256; a member that differs stops the restore with its name, and the staging folder is removed: nothing of
 *    the targets was touched;
 * 5. with `force`, what the targets held is moved aside first, into `<dir>.before-restore-<time>` next to each;
 * 6. the staged files are moved into place (renames). Settings files (`<config dir>/settings/`) are written where
 *    missing; an existing one is kept (a redacted llm.json never replaces a configured one) unless `force`, which keeps
 *    the old settings folder aside too.
 *
 * The restored directory carries the format version it was written with; an older one is migrated at the next start.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { acquireDataDirLock, LOCK_FILE_NAME } from '../common/data-dir-lock';
import { mkdirPrivate } from '../common/private-fs';
import { type BackupManifest } from './backup-format';
import { BackupArchiveError, extractVerified, openBackupArchive } from './backup-archive-reader';
import { type BackupLocations, RESTORE_STAGING_PREFIX } from './backup-sources';
import { CURRENT_DATA_FORMAT } from './data-format';

/** The targets are not empty (and no `force`), or another reason the restore cannot start. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

export interface RestoreOptions {
  archive: string;
  force: boolean;
}

export interface RestoreResult {
  manifest: BackupManifest;
  files: number;
  /** folders the previous contents were moved into (`force`) */
  keptAside: string[];
  /** settings files of the archive not written because the config directory already had them */
  keptSettings: string[];
}

const LOCK_SOCKET = /^\.cashcode-.*\.sock$/;

function isWithin(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** What a target holds besides the lock, its socket and a restore's staging folder. */
async function contentsOf(dir: string): Promise<string[]> {
  return (await listDir(dir)).filter(
    (name) => name !== LOCK_FILE_NAME && !LOCK_SOCKET.test(name) && !name.startsWith(RESTORE_STAGING_PREFIX),
  );
}

/** Moves `source` to `destination` (a rename; a copy and removal across file systems). */
async function move(source: string, destination: string): Promise<void> {
  try {
    await fs.rename(source, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await fs.cp(source, destination, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    await fs.rm(source, { recursive: true, force: true });
  }
}

/** Moves every entry of `source` into `destination`, merging folders that exist on both sides. */
async function moveInto(source: string, destination: string): Promise<void> {
  await mkdirPrivate(destination);
  for (const name of await listDir(source)) {
    const from = join(source, name);
    const to = join(destination, name);
    const existing = await fs.lstat(to).catch(() => null);
    if (existing?.isDirectory() && (await fs.lstat(from)).isDirectory()) await moveInto(from, to);
    else await move(from, to);
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Restores an archive (see the file comment). */
export async function restoreBackup(locations: BackupLocations, options: RestoreOptions): Promise<RestoreResult> {
  const open = await openBackupArchive(options.archive);
  let lock: Awaited<ReturnType<typeof acquireDataDirLock>> | null = null;
  let staging: string | null = null;
  try {
    const { manifest } = open;
    if (manifest.data_format_version > CURRENT_DATA_FORMAT) {
      throw new BackupArchiveError(
        `the archive holds data format ${manifest.data_format_version}, written by a newer CashCode (${manifest.app_version}); this version reads up to format ${CURRENT_DATA_FORMAT}: upgrade CashCode first`,
      );
    }
    await mkdirPrivate(locations.dataDir);
    lock = await acquireDataDirLock(locations.dataDir, { waitMs: 0 });

    // the roots and where they go; a root inside the data directory is covered by the data directory's own check
    const targets: { root: string; dir: string }[] = [{ root: 'data', dir: locations.dataDir }];
    if (!isWithin(locations.dataDir, locations.memoryDir)) targets.push({ root: 'memory', dir: locations.memoryDir });
    if (!isWithin(locations.dataDir, locations.attachmentsDir)) targets.push({ root: 'attachments', dir: locations.attachmentsDir });
    for (const target of targets) {
      const contents = await contentsOf(target.dir);
      if (contents.length > 0 && !options.force) {
        throw new RestoreRefusedError(
          `${target.dir} is not empty (${contents.length} entries, e.g. ${contents.slice(0, 3).join(', ')}): restore into an empty ` +
            'directory (set CASHCODE_DATA_DIR), or pass --force to move what it holds aside first',
        );
      }
    }

    staging = join(locations.dataDir, `${RESTORE_STAGING_PREFIX}${randomBytes(8).toString('hex')}`);
    await mkdirPrivate(staging);
    await extractVerified(open, staging);

    const when = stamp();
    const keptAside: string[] = [];
    if (options.force) {
      for (const target of targets) {
        const contents = await contentsOf(target.dir);
        if (contents.length === 0) continue;
        const aside = `${target.dir}.before-restore-${when}`;
        await mkdirPrivate(aside);
        for (const name of contents) await move(join(target.dir, name), join(aside, name));
        keptAside.push(aside);
      }
    }
    const places: Record<string, string> = {
      data: locations.dataDir,
      memory: locations.memoryDir,
      attachments: locations.attachmentsDir,
    };
    for (const [root, dir] of Object.entries(places)) {
      if ((await listDir(join(staging, root))).length > 0) await moveInto(join(staging, root), dir);
    }

    const keptSettings: string[] = [];
    const stagedSettings = join(staging, 'config', 'settings');
    if ((await listDir(stagedSettings)).length > 0) {
      if (options.force && (await listDir(locations.settingsDir)).length > 0) {
        const aside = `${locations.settingsDir}.before-restore-${when}`;
        await move(locations.settingsDir, aside);
        keptAside.push(aside);
      }
      await mkdirPrivate(locations.settingsDir);
      for (const file of manifest.files.filter((f) => f.path.startsWith('config/settings/'))) {
        const rel = file.path.slice('config/settings/'.length);
        const to = join(locations.settingsDir, ...rel.split('/'));
        if (await fs.lstat(to).catch(() => null)) {
          keptSettings.push(relative(locations.settingsDir, to));
          continue;
        }
        await mkdirPrivate(join(to, '..'));
        await move(join(stagedSettings, ...rel.split('/')), to);
      }
    }
    return { manifest, files: manifest.files.length, keptAside, keptSettings };
  } finally {
    open.zip.close();
    if (staging !== null) await fs.rm(staging, { recursive: true, force: true });
    await lock?.release();
  }
}
