/**
 * Takes a consistent copy of one file while the server runs (openspec backup "Requirement: Consistent while the server
 * runs"), into the backup's staging folder, hashing what is copied:
 *
 * - `sqlite`: SQLite's online backup (common/sqlite.ts `backupSqliteFile`): every committed transaction, none half;
 * - `append-only` (`*.jsonl`: chat histories, the approval audit, the Dream runs): the file's length is recorded first
 *   and the copy ends at the last complete line within it, so a record appended meanwhile is either whole or absent;
 * - `file`: the whole file through one open descriptor (the server replaces these atomically: rename, never rewrite
 *   in place, so the descriptor sees one version);
 * - `redactable`: the JSON with its secrets removed (backup-sources.ts `redactSettings`) unless secrets are asked for.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createPrivateWriteStream, mkdirPrivate, writeFilePrivate } from '../common/private-fs';
import { backupSqliteFile } from '../common/sqlite';
import type { BackupManifestFile } from './backup-format';
import { redactSettings, type SourceFile } from './backup-sources';

const TAIL_CHUNK = 64 * 1024;

/** The end of the last complete line at or before `length` of an open file (0 when it holds no newline there). */
export async function lastLineEnd(handle: fs.FileHandle, length: number): Promise<number> {
  const buffer = Buffer.alloc(TAIL_CHUNK);
  let end = length;
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const { bytesRead } = await handle.read(buffer, 0, end - start, start);
    const index = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (index >= 0) return start + index + 1;
    end = start;
  }
  return 0;
}

/**
 * Copies `source` into a new 0600 file, hashing the bytes, through one descriptor (a file replaced meanwhile is
 * copied as the version that was opened). `appendOnly`: only up to the last complete line within the length the file
 * had when it was opened.
 */
async function copyHashed(source: string, destination: string, appendOnly = false): Promise<{ size: number; sha256: string }> {
  const handle = await fs.open(source, 'r');
  const hash = createHash('sha256');
  let size = 0;
  try {
    let end: number | undefined;
    if (appendOnly) end = await lastLineEnd(handle, (await handle.stat()).size);
    if (end === 0) {
      await writeFilePrivate(destination, '');
      return { size: 0, sha256: hash.digest('hex') };
    }
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const input = handle.createReadStream({ start: 0, ...(end === undefined ? {} : { end: end - 1 }), autoClose: false });
    await pipeline(input, counter, createPrivateWriteStream(destination));
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest('hex') };
}

/** SHA-256 and size of a file. */
export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * Copies one source into `destination` and describes it for the manifest; null when it is left out (a secret without
 * `includeSecrets`, a file that disappeared meanwhile, a settings file that is not JSON and would carry its secrets).
 */
export async function snapshotFile(source: SourceFile, destination: string, includeSecrets: boolean): Promise<BackupManifestFile | null> {
  const path = `${source.root}/${source.relative}`;
  if (source.kind === 'secret' && !includeSecrets) return null;
  await mkdirPrivate(dirname(destination));
  try {
    const mtime_ms = Math.round((await fs.stat(source.absolute)).mtimeMs);
    const described = await snapshotContent(source, path, destination, includeSecrets);
    return described === null ? null : { ...described, mtime_ms };
  } catch (error) {
    // removed between the listing and the copy (a deleted chat, a rotated file): not part of this snapshot
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      await fs.rm(destination, { force: true });
      return null;
    }
    throw error;
  }
}

async function snapshotContent(
  source: SourceFile,
  path: string,
  destination: string,
  includeSecrets: boolean,
): Promise<BackupManifestFile | null> {
  switch (source.kind) {
    case 'sqlite': {
      await backupSqliteFile(source.absolute, destination);
      return { path, kind: 'sqlite', ...(await hashFile(destination)) };
    }
    case 'append-only':
      return { path, kind: 'append-only', ...(await copyHashed(source.absolute, destination, true)) };
    case 'redactable': {
      if (includeSecrets) return { path, kind: 'file', ...(await copyHashed(source.absolute, destination)) };
      let parsed: unknown;
      try {
        parsed = JSON.parse(await fs.readFile(source.absolute, 'utf8'));
      } catch {
        return null;
      }
      await writeFilePrivate(destination, `${JSON.stringify(redactSettings(parsed), null, 2)}\n`);
      return { path, kind: 'redacted', ...(await hashFile(destination)) };
    }
    default:
      return { path, kind: 'file', ...(await copyHashed(source.absolute, destination)) };
  }
}
