/**
 * Migrations of the data directory's on-disk format (openspec backup "Requirement: Upgrades never lose data"). Each
 * format change ships one step here; `prepareDataDir` runs the missing steps at start, before any module reads the
 * directory:
 *
 * 1. the paths the step changes (`touches`, relative to the data directory) are copied first into
 *    `<data dir>/.migrations/<from>-to-<to>-<time>/` (owner-only);
 * 2. the step runs; it must be idempotent (an interrupted step runs again from the start at the next start);
 * 3. the format marker is rewritten atomically with the step's target version, so a finished step never runs twice.
 *
 * A step that throws stops the start with DataFormatError naming the step and its copy; the marker still names the
 * old format. A directory written by a newer version is refused before anything is read.
 *
 * Every step is tested from a fixture of the layout it migrates (apps/api/test/fixtures/data-dir-format-0 for the
 * first one).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { copyTreePrivate, mkdirPrivate } from '../common/private-fs';
import {
  CURRENT_DATA_FORMAT,
  DataFormatError,
  newerFormatMessage,
  readDataFormat,
  writeDataFormat,
} from './data-format';

export const MIGRATION_BACKUP_DIR = '.migrations';

export interface DataMigration {
  from: number;
  to: number;
  /** one line for the start-up log */
  description: string;
  /** paths (relative to the data directory) the step may change: copied before it runs; missing ones are skipped */
  touches: readonly string[];
  run(dataDir: string): Promise<void>;
}

/**
 * The steps, oldest first. Format 0 is the layout before versions were recorded; format 1 is the same layout with the
 * marker, so its step changes no file.
 */
export const DATA_MIGRATIONS: readonly DataMigration[] = [
  {
    from: 0,
    to: 1,
    description: 'record the data format version (the layout is unchanged)',
    touches: [],
    run: async () => undefined,
  },
];

export interface PrepareResult {
  /** the format found (null: a new directory) */
  found: number | null;
  /** the steps run, e.g. ["0→1"] */
  migrated: string[];
}

export interface PrepareOptions {
  writtenBy: string;
  log?: (line: string) => void;
  /** for tests: another list of steps and current version */
  migrations?: readonly DataMigration[];
  current?: number;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Checks the data directory's format and migrates it to the current one (see the file comment). */
export async function prepareDataDir(dataDir: string, options: PrepareOptions): Promise<PrepareResult> {
  const migrations = options.migrations ?? DATA_MIGRATIONS;
  const current = options.current ?? CURRENT_DATA_FORMAT;
  const marker = await readDataFormat(dataDir);
  if (marker === null) {
    await writeDataFormat(dataDir, current, options.writtenBy);
    return { found: null, migrated: [] };
  }
  if (marker.format_version > current) throw new DataFormatError(newerFormatMessage(dataDir, marker, current));
  const migrated: string[] = [];
  let version = marker.format_version;
  while (version < current) {
    const step = migrations.find((candidate) => candidate.from === version);
    if (!step || step.to <= version) {
      throw new DataFormatError(`no migration from data format ${version} of ${dataDir}; this version cannot read it`);
    }
    const copy = join(dataDir, MIGRATION_BACKUP_DIR, `${step.from}-to-${step.to}-${stamp()}`);
    try {
      if (step.touches.length > 0) {
        await mkdirPrivate(copy);
        for (const path of step.touches) {
          const source = join(dataDir, path);
          const exists = await fs.stat(source).then(
            () => true,
            () => false,
          );
          if (exists) await copyTreePrivate(source, join(copy, path), { recursive: true, verbatimSymlinks: true });
        }
      }
      await step.run(dataDir);
    } catch (error) {
      const kept = step.touches.length > 0 ? `; the files it changes were copied to ${copy} first` : '';
      throw new DataFormatError(
        `the migration of ${dataDir} from data format ${step.from} to ${step.to} (${step.description}) failed: ${(error as Error).message}${kept}`,
      );
    }
    await writeDataFormat(dataDir, step.to, options.writtenBy);
    options.log?.(`data format ${step.from} → ${step.to}: ${step.description}`);
    migrated.push(`${step.from}→${step.to}`);
    version = step.to;
  }
  return { found: marker.format_version, migrated };
}
