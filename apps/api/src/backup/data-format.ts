/**
 * The data directory's on-disk format version (openspec backup "Requirement: Upgrades never lose data"):
 * `<data dir>/.cashcode-format.json`, `{"format_version": N, "written_by": "<CashCode version>"}`, written atomically
 * (0600) at every start that changed it.
 *
 * - A directory without the file that holds data was written before versions were recorded: format 0 (the layout of
 *   ARCHITECTURE.md "On-disk layout" as it was then); an empty or new one is stamped with the current format.
 * - An older format is migrated at start (backup/migrations.ts), step by step, the file updated after each step.
 * - A newer format (written by a later CashCode) is refused with DataFormatError: nothing is read or changed.
 */
import { isRecord } from '@cashcode/contracts';
import { promises as fs, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJsonAtomic } from '../common/atomic-file';

export const DATA_FORMAT_FILE = '.cashcode-format.json';
/** The format this version reads and writes. Bump it with a migration in backup/migrations.ts. */
export const CURRENT_DATA_FORMAT = 1;

/** The data directory cannot be used by this version (newer format, unreadable marker, failed migration). */
export class DataFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFormatError';
  }
}

export interface DataFormatMarker {
  format_version: number;
  written_by: string;
}

/** The CashCode version (root package.json), or `unknown`. */
export function appVersion(rootDir: string): string {
  try {
    const parsed: unknown = JSON.parse(readFileSync(resolve(rootDir, 'package.json'), 'utf8'));
    return isRecord(parsed) && typeof parsed['version'] === 'string' ? parsed['version'] : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Entries of a data directory that do not count as data (the lock, its socket, an empty log folder). */
const NOT_DATA = /^(?:\.cashcode\.lock|\.cashcode-.*\.sock|\.backup-tmp|logs|workspace)$/;

/**
 * Whether the directory holds data written by some version: a file, or a folder with something in it, besides the
 * lock, its socket, the logs and the workspace (the start creates empty `memory/`, `workspace/` and `logs/` first).
 */
async function holdsData(dataDir: string): Promise<boolean> {
  let entries;
  try {
    entries = await fs.readdir(dataDir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (entry.name === DATA_FORMAT_FILE || NOT_DATA.test(entry.name)) continue;
    if (!entry.isDirectory()) return true;
    if ((await fs.readdir(join(dataDir, entry.name)).catch(() => [])).length > 0) return true;
  }
  return false;
}

/**
 * The directory's format: the marker's version, 0 for data without a marker, or null for an empty directory (a new
 * one: stamp it). Throws DataFormatError when the marker cannot be read.
 */
export async function readDataFormat(dataDir: string): Promise<DataFormatMarker | null> {
  let text: string;
  try {
    text = await fs.readFile(join(dataDir, DATA_FORMAT_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new DataFormatError(`cannot read ${join(dataDir, DATA_FORMAT_FILE)}: ${(error as Error).message}`);
    }
    return (await holdsData(dataDir)) ? { format_version: 0, written_by: 'a version before 0.1.0 recorded formats' } : null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const version = isRecord(parsed) ? parsed['format_version'] : undefined;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
    throw new DataFormatError(
      `${join(dataDir, DATA_FORMAT_FILE)} is not a valid format marker; restore it from a backup or remove it to have the directory read as the oldest format`,
    );
  }
  const writtenBy = isRecord(parsed) && typeof parsed['written_by'] === 'string' ? parsed['written_by'] : 'unknown';
  return { format_version: version, written_by: writtenBy };
}

export async function writeDataFormat(dataDir: string, version: number, writtenBy: string): Promise<void> {
  await writeJsonAtomic(join(dataDir, DATA_FORMAT_FILE), { format_version: version, written_by: writtenBy });
}

/** The refusal of a directory written by a newer CashCode. */
export function newerFormatMessage(dataDir: string, marker: DataFormatMarker, current = CURRENT_DATA_FORMAT): string {
  return (
    `the data directory ${dataDir} was written by a newer CashCode (${marker.written_by}, data format ${marker.format_version}; ` +
    `this version reads up to format ${current}). Nothing was changed: upgrade CashCode, or start this version on ` +
    'another CASHCODE_DATA_DIR (a backup made by this version restores into an empty one)'
  );
}

/**
 * Refuses a directory written by a newer version before the start creates or tightens anything in it (the migrations
 * run later, under the data-dir lock). A missing directory or marker passes.
 */
export async function refuseNewerFormat(dataDir: string, current = CURRENT_DATA_FORMAT): Promise<void> {
  const marker = await readDataFormat(dataDir);
  if (marker !== null && marker.format_version > current) throw new DataFormatError(newerFormatMessage(dataDir, marker, current));
}
