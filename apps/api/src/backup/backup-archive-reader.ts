/**
 * Reads a backup archive for a restore (openspec backup "Requirement: Restore checks the archive first"). Before
 * anything is extracted, the central directory is checked member by member with the rules of a Skill ZIP
 * (common/zip-member.ts: a legal relative path, no symbolic link or special file, no encryption) plus the backup's
 * own: no duplicate, a known root (`data/`, `memory/`, `attachments/`, `config/settings/`), at most
 * BACKUP_LIMITS.maxDepth folders, sizes within the limits, and the members equal to the manifest's list with the
 * declared sizes. Extraction then counts and hashes the bytes actually inflated; a member whose bytes differ from the
 * manifest (size or SHA-256) stops it, naming the member; each file gets back its recorded modification time. A truncated archive has no central directory and is refused
 * as a whole.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Entry, ZipFile } from 'yauzl';
import { createPrivateWriteStream, mkdirPrivate } from '../common/private-fs';
import { isZipMemberEncrypted, zipMemberName, zipMemberPath, zipMemberType } from '../common/zip-member';
import { BACKUP_LIMITS, type BackupManifest, MANIFEST_MEMBER, ManifestError, memberRoot, parseManifest } from './backup-format';

/** Why an archive is refused; `member` names the file that failed when one did. */
export class BackupArchiveError extends Error {
  constructor(
    message: string,
    readonly member: string | null = null,
  ) {
    super(message);
    this.name = 'BackupArchiveError';
  }
}

export interface OpenBackup {
  manifest: BackupManifest;
  /** member path → its entry */
  entries: Map<string, Entry>;
  zip: ZipFile;
}

function refuse(message: string, member: string | null = null): never {
  throw new BackupArchiveError(member === null ? message : `${message}: ${member}`, member);
}

async function readEntries(zip: ZipFile): Promise<Entry[]> {
  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve());
    zip.once('error', (error: Error) => reject(error));
    zip.readEntry();
  });
  return entries;
}

async function readManifest(zip: ZipFile, entry: Entry): Promise<BackupManifest> {
  if (entry.uncompressedSize > BACKUP_LIMITS.manifestMaxBytes) refuse('the manifest is too large', MANIFEST_MEMBER);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > BACKUP_LIMITS.manifestMaxBytes) refuse('the manifest is too large', MANIFEST_MEMBER);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof BackupArchiveError) throw error;
    refuse('the manifest cannot be read (damaged archive)', MANIFEST_MEMBER);
  }
  try {
    return parseManifest(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    if (error instanceof ManifestError) refuse(error.message);
    throw error;
  }
}

/** Opens and checks an archive (see the file comment). The caller closes `zip`. */
export async function openBackupArchive(file: string): Promise<OpenBackup> {
  const stat = await fs.stat(file).catch(() => null);
  if (stat === null || !stat.isFile()) refuse('no such archive file', file);
  const yauzl = await import('yauzl');
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(file, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: true,
      strictFileNames: true,
      autoClose: false,
    });
  } catch {
    refuse('the archive is truncated or is not a ZIP file', file);
  }
  try {
    return { ...(await checkMembers(yauzl, zip)), zip };
  } catch (error) {
    zip.close();
    throw error;
  }
}

async function checkMembers(yauzl: typeof import('yauzl'), zip: ZipFile): Promise<{ manifest: BackupManifest; entries: Map<string, Entry> }> {
  if (zip.entryCount > BACKUP_LIMITS.maxEntries) refuse(`the archive has more than ${BACKUP_LIMITS.maxEntries} members`);
  let all: Entry[];
  try {
    all = await readEntries(zip);
  } catch {
    refuse('the archive directory is damaged');
  }
  const entries = new Map<string, Entry>();
  let manifestEntry: Entry | null = null;
  for (const entry of all) {
    const name = zipMemberName(yauzl, entry);
    const checked = zipMemberPath(name);
    if (checked === null) refuse('the archive contains an illegal path', name);
    const type = zipMemberType(entry);
    if (checked.directory) {
      if (type !== 'unknown' && type !== 'directory') refuse('the archive contains an unsupported member type', name);
      continue;
    }
    if (type !== 'unknown' && type !== 'file') refuse('the archive contains a symlink or special file', name);
    if (isZipMemberEncrypted(entry)) refuse('encrypted archive members are not supported', name);
    if (entries.has(checked.path) || (checked.path === MANIFEST_MEMBER && manifestEntry !== null)) {
      refuse('the archive contains duplicate paths', name);
    }
    if (checked.path === MANIFEST_MEMBER) {
      manifestEntry = entry;
      continue;
    }
    if (memberRoot(checked.path) === null || checked.segments.length < 2) refuse('the archive contains a member outside the backup roots', name);
    if (checked.path.startsWith('config/') && !checked.path.startsWith('config/settings/')) {
      refuse('the archive contains a member outside the backup roots', name);
    }
    if (checked.segments.length > BACKUP_LIMITS.maxDepth + 2) refuse(`the archive nests more than ${BACKUP_LIMITS.maxDepth} folders`, name);
    if (entry.uncompressedSize > BACKUP_LIMITS.memberMaxBytes) refuse('the archive member is too large', name);
    entries.set(checked.path, entry);
  }
  if (manifestEntry === null) refuse('the archive has no manifest.json (not a CashCode backup)');
  const manifest = await readManifest(zip, manifestEntry);
  const listed = new Set<string>();
  for (const file of manifest.files) {
    if (listed.has(file.path)) refuse('the manifest lists a file twice', file.path);
    listed.add(file.path);
    const entry = entries.get(file.path);
    if (!entry) refuse('a file of the manifest is missing from the archive', file.path);
    if (entry.uncompressedSize !== file.size) refuse('a member\u2019s size differs from the manifest', file.path);
  }
  for (const path of entries.keys()) {
    if (!listed.has(path)) refuse('the archive contains a file the manifest does not list', path);
  }
  return { manifest, entries };
}

/**
 * Extracts every file of the manifest under `staging` (created 0700, files 0600), checking the bytes inflated
 * against the manifest's size and SHA-256. Throws BackupArchiveError naming the first member that differs.
 */
export async function extractVerified(open: OpenBackup, staging: string): Promise<void> {
  for (const file of open.manifest.files) {
    const entry = open.entries.get(file.path) as Entry;
    const destination = join(staging, file.path);
    await mkdirPrivate(dirname(destination));
    const hash = createHash('sha256');
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > file.size) {
          done(new BackupArchiveError(`a member inflates beyond its size in the manifest: ${file.path}`, file.path));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      const stream = await open.zip.openReadStreamPromise(entry);
      await pipeline(stream, counter, createPrivateWriteStream(destination, 'wx'));
    } catch (error) {
      if (error instanceof BackupArchiveError) throw error;
      refuse('a member is damaged (it does not inflate to its recorded size and CRC-32)', file.path);
    }
    if (size !== file.size || hash.digest('hex') !== file.sha256) {
      refuse('a member does not match the manifest (its SHA-256 differs: the archive was changed)', file.path);
    }
    if (file.mtime_ms !== undefined) {
      const when = new Date(file.mtime_ms);
      await fs.utimes(destination, when, when);
    }
  }
}
