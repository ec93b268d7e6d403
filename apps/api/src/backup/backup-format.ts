/**
 * The backup archive (openspec backup): one ZIP whose first member is `manifest.json` and whose other members are the
 * files the server owns, each under the root it came from:
 *
 * | member prefix      | restored into                     |
 * |--------------------|-----------------------------------|
 * | `data/`            | CASHCODE_DATA_DIR                 |
 * | `memory/`          | MEMORY_DIR                        |
 * | `attachments/`     | `<WORKSPACE_DIR>/attachments`     |
 * | `config/settings/` | `<CASHCODE_CONFIG_DIR>/settings`  |
 *
 * The manifest lists every file member with its size and SHA-256 and how it was taken (`sqlite`: a copy made through
 * SQLite's online backup; `append-only`: the file up to the last complete line at a recorded length; `file`: the
 * whole file; `redacted`: a settings file with its secrets removed) and its modification time. A restore checks every member against it before
 * anything is written. Additive only: a later version may add fields; a change readers cannot ignore bumps
 * `format_version`.
 */
import { isRecord } from '@cashcode/contracts';

export const BACKUP_FORMAT = 'cashcode-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_MEMBER = 'manifest.json';

export const BACKUP_ROOTS = ['data', 'memory', 'attachments', 'config'] as const;
export type BackupRoot = (typeof BACKUP_ROOTS)[number];

export type BackupFileKind = 'sqlite' | 'append-only' | 'file' | 'redacted';
const FILE_KINDS: readonly BackupFileKind[] = ['sqlite', 'append-only', 'file', 'redacted'];

export interface BackupManifestFile {
  /** the member name: `<root>/<relative path>` */
  path: string;
  size: number;
  sha256: string;
  kind: BackupFileKind;
  /** the source's modification time (ms since the epoch), given back by a restore: chat lists are ordered by it */
  mtime_ms?: number;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  /** ISO time the snapshot started */
  created_at: string;
  /** the CashCode version that wrote it (root package.json) */
  app_version: string;
  /** the data directory's on-disk format version (backup/data-format.ts) */
  data_format_version: number;
  /** Node.js that wrote it (the SQLite files are readable by any supported one) */
  node_version: string;
  /** whether secrets (API keys, the API token, MCP credentials) are in the archive */
  secrets: boolean;
  files: BackupManifestFile[];
}

/** Limits a restore enforces on an archive before extracting anything. */
export const BACKUP_LIMITS = {
  /** members of one archive */
  maxEntries: 2_000_000,
  /** bytes of manifest.json */
  manifestMaxBytes: 512 * 1024 * 1024,
  /** bytes of one member */
  memberMaxBytes: 64 * 1024 * 1024 * 1024,
  /** folders below a root */
  maxDepth: 32,
} as const;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Why a manifest is unusable (thrown by parseManifest; the caller names the archive). */
export class ManifestError extends Error {}

/** Parses and checks `manifest.json`; member paths are checked by the archive reader. */
export function parseManifest(text: string): BackupManifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ManifestError('manifest.json is not valid JSON');
  }
  if (!isRecord(data) || data['format'] !== BACKUP_FORMAT) throw new ManifestError('manifest.json is not a CashCode backup manifest');
  const version = data['format_version'];
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new ManifestError('manifest.json has no valid format_version');
  }
  if (version > BACKUP_FORMAT_VERSION) {
    throw new ManifestError(
      `the archive was written by a newer CashCode (backup format ${version}; this version reads up to ${BACKUP_FORMAT_VERSION}): upgrade CashCode first`,
    );
  }
  const dataFormat = data['data_format_version'];
  if (typeof dataFormat !== 'number' || !Number.isInteger(dataFormat) || dataFormat < 0) {
    throw new ManifestError('manifest.json has no valid data_format_version');
  }
  const files = data['files'];
  if (!Array.isArray(files)) throw new ManifestError('manifest.json has no file list');
  const parsed: BackupManifestFile[] = [];
  for (const [index, file] of files.entries()) {
    if (
      !isRecord(file) ||
      typeof file['path'] !== 'string' ||
      typeof file['size'] !== 'number' ||
      !Number.isSafeInteger(file['size']) ||
      file['size'] < 0 ||
      typeof file['sha256'] !== 'string' ||
      !SHA256_HEX.test(file['sha256']) ||
      !FILE_KINDS.includes(file['kind'] as BackupFileKind)
    ) {
      throw new ManifestError(`manifest.json: entry ${index} is invalid`);
    }
    const mtime = file['mtime_ms'];
    parsed.push({
      path: file['path'],
      size: file['size'],
      sha256: file['sha256'],
      kind: file['kind'] as BackupFileKind,
      ...(typeof mtime === 'number' && Number.isFinite(mtime) && mtime >= 0 ? { mtime_ms: mtime } : {}),
    });
  }
  return {
    format: BACKUP_FORMAT,
    format_version: version,
    created_at: typeof data['created_at'] === 'string' ? data['created_at'] : '',
    app_version: typeof data['app_version'] === 'string' ? data['app_version'] : '',
    data_format_version: dataFormat,
    node_version: typeof data['node_version'] === 'string' ? data['node_version'] : '',
    secrets: data['secrets'] === true,
    files: parsed,
  };
}

/** The root of a member path (`data/x` → `data`), or null for anything else. */
export function memberRoot(path: string): BackupRoot | null {
  const first = path.split('/', 1)[0] as string;
  return (BACKUP_ROOTS as readonly string[]).includes(first) ? (first as BackupRoot) : null;
}
