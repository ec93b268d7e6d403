/**
 * What a backup holds (openspec backup "Requirement: One archive with everything the server owns"): the files under the
 * data directory, MEMORY_DIR, the chat attachments of the workspace and the config directory's `settings/`, each
 * classified by how it is copied while the server runs. Left out: what the server derives or holds only while it runs
 * (the data-dir lock and status socket, the session search index — rebuilt from the histories at start —, SQLite's
 * `-wal` / `-shm` / `-journal` companions, the temp files of atomic writes, the backup and restore work folders), the
 * logs, and the rest of the workspace (the user's own folder, which the tools edit). Symbolic links and special files
 * are never followed nor archived.
 */
import { promises as fs } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { AppConfig } from '../config/app-config';
import type { BackupFileKind, BackupRoot } from './backup-format';

/** Work folder of backups being written, inside the data directory (removed at start). */
export const BACKUP_WORK_DIR = '.backup-tmp';
/** Prefix of a restore's staging folder inside the data directory. */
export const RESTORE_STAGING_PREFIX = '.restore-';

/** Where each root of an archive lives on this machine. */
export interface BackupLocations {
  dataDir: string;
  memoryDir: string;
  attachmentsDir: string;
  /** `<config dir>/settings` */
  settingsDir: string;
  /** excluded when inside the data directory */
  logDir: string;
  workspaceDir: string;
}

export function backupLocations(config: Pick<AppConfig, 'dataDir' | 'memoryDir' | 'workspaceDir' | 'configDir' | 'logDir'>): BackupLocations {
  return {
    dataDir: resolve(config.dataDir),
    memoryDir: resolve(config.memoryDir),
    attachmentsDir: resolve(config.workspaceDir, 'attachments'),
    settingsDir: resolve(config.configDir, 'settings'),
    logDir: resolve(config.logDir),
    workspaceDir: resolve(config.workspaceDir),
  };
}

/** How one file is taken: the manifest kinds, plus `secret` (only with secrets) and `redactable` (settings with keys). */
export type SourceKind = Exclude<BackupFileKind, 'redacted'> | 'secret' | 'redactable';

export interface SourceFile {
  root: BackupRoot;
  /** path below the root, `/`-separated */
  relative: string;
  absolute: string;
  kind: SourceKind;
}

export interface SourceListing {
  files: SourceFile[];
  /** symbolic links and special files met (never archived) */
  skipped: string[];
}

/** `.<name>.<pid>.<12 hex>.tmp`: a write of common/atomic-file.ts in progress. */
const ATOMIC_TEMP = /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/;
const SQLITE_COMPANION = /\.sqlite-(?:wal|shm|journal)$/;
const LOCK_SOCKET = /^\.cashcode-.*\.sock$/;

/** Paths (below the data directory) that are derived or belong to a running server. */
const DATA_EXCLUDED = new Set(['.cashcode.lock', BACKUP_WORK_DIR, 'memory-index']);

/** Settings files whose secrets are removed unless secrets are asked for. */
const REDACTABLE = new Set(['data/mcp/servers.json', 'config/settings/llm.json']);
/** Files that are nothing but credentials: archived only with secrets. */
function isSecret(root: BackupRoot, rel: string): boolean {
  // settings/telegram.json holds the Telegram bot token (channels/telegram/telegram-settings.store.ts)
  return (
    (root === 'config' && (rel === 'settings/api-token' || rel === 'settings/telegram.json')) ||
    (root === 'data' && (rel === 'mcp/oauth' || rel.startsWith('mcp/oauth/')))
  );
}

function classify(root: BackupRoot, rel: string): SourceKind {
  if (isSecret(root, rel)) return 'secret';
  if (REDACTABLE.has(`${root}/${rel}`)) return 'redactable';
  if (rel.endsWith('.sqlite')) return 'sqlite';
  if (rel.endsWith('.jsonl')) return 'append-only';
  return 'file';
}

function isWithin(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** Lists every file to archive, sorted by member path. Missing roots are simply empty. */
export async function listSources(locations: BackupLocations): Promise<SourceListing> {
  const files: SourceFile[] = [];
  const skipped: string[] = [];
  const otherRoots = [locations.memoryDir, locations.workspaceDir, locations.logDir];
  const roots: { root: BackupRoot; dir: string; base: string }[] = [
    { root: 'data', dir: locations.dataDir, base: locations.dataDir },
    { root: 'memory', dir: locations.memoryDir, base: locations.memoryDir },
    { root: 'attachments', dir: locations.attachmentsDir, base: locations.attachmentsDir },
    // the config root keeps the `settings/` folder in its member names
    { root: 'config', dir: locations.settingsDir, base: resolve(locations.settingsDir, '..') },
  ];
  for (const { root, dir, base } of roots) {
    const walk = async (current: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(current, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
        throw error;
      }
      for (const entry of entries) {
        const absolute = join(current, entry.name);
        const rel = relative(base, absolute).split(sep).join('/');
        if (ATOMIC_TEMP.test(entry.name) || SQLITE_COMPANION.test(entry.name)) continue;
        if (root === 'data') {
          if (DATA_EXCLUDED.has(rel) || LOCK_SOCKET.test(rel) || rel.startsWith(RESTORE_STAGING_PREFIX)) continue;
          // a separate root (memory, workspace) or the logs, when they live inside the data directory
          if (otherRoots.some((other) => isWithin(other, absolute))) continue;
        }
        if (entry.isDirectory()) {
          await walk(absolute);
        } else if (entry.isFile()) {
          files.push({ root, relative: rel, absolute, kind: classify(root, rel) });
        } else {
          skipped.push(`${root}/${rel}`);
        }
      }
    };
    await walk(dir);
  }
  files.sort((a, b) => {
    const left = `${a.root}/${a.relative}`;
    const right = `${b.root}/${b.relative}`;
    return left < right ? -1 : left > right ? 1 : 0;
  });
  return { files, skipped };
}

/** Keys whose values are credentials, removed from a redacted settings file. */
const SECRET_KEYS = /^(?:api_key|api_key_origin|apikey|token|access_token|refresh_token|client_secret|secret|password)$/i;
/** Maps whose every value may be a credential (HTTP headers, environment variables of an MCP server). */
const SECRET_MAPS = new Set(['headers', 'env']);

/**
 * A settings file without its secrets: credential keys removed, `headers` and `env` maps emptied, everything else
 * kept (the base URLs, the chosen models, the MCP servers' addresses). The key names are the same for every provider
 * and server entry, so a settings section added later is covered as long as it names its key `api_key`.
 */
export function redactSettings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSettings);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (SECRET_KEYS.test(key)) continue;
    out[key] = SECRET_MAPS.has(key) && inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? {} : redactSettings(inner);
  }
  return out;
}
