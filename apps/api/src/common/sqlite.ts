/**
 * The embedded SQL store: Node's built-in `node:sqlite` (SQLite 3 with FTS5; no native addon to build). The one place
 * that opens a database file, so every store gets the same file modes, journal mode and busy timeout.
 *
 * - The file (and its `-wal` / `-shm` companions) is owner-only like everything the server writes: the parent directory
 *   is created 0700 and the files are tightened to 0600 after opening (SQLite creates them with the umask's mode).
 * - WAL journal with `synchronous=NORMAL`: a commit is durable across a process crash (what a kill or a restart does);
 *   after a power loss the last commits may roll back, never corrupt.
 * - Node 22 flags `node:sqlite` as experimental and prints one ExperimentalWarning when it is first loaded; that one
 *   warning is dropped here (it is about the module's API stability, which the tests of each store cover), every other
 *   warning still reaches the log.
 */
import { chmodSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync as DatabaseSyncType } from 'node:sqlite';
import { mkdirPrivateSync, PRIVATE_FILE_MODE } from './private-fs';

export type SqliteDatabase = DatabaseSyncType;

let sqliteModule: typeof import('node:sqlite') | undefined;

function loadSqlite(): typeof import('node:sqlite') {
  if (sqliteModule) return sqliteModule;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, with the warning filter above
    sqliteModule = require('node:sqlite') as typeof import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
  return sqliteModule;
}

export interface OpenSqliteOptions {
  /** milliseconds a writer waits for another connection's lock before SQLITE_BUSY (default 5000) */
  busyTimeoutMs?: number;
}

/** Opens (creating when missing) an owner-only SQLite database in WAL mode. `':memory:'` opens a private in-memory one. */
export function openSqlite(file: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  const { DatabaseSync } = loadSqlite();
  if (file !== ':memory:') mkdirPrivateSync(dirname(file));
  const db = new DatabaseSync(file);
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    if (file !== ':memory:') {
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = NORMAL');
      tightenDatabaseFiles(file);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Makes the database file and its WAL companions 0600 (SQLite creates them with the process umask). */
export function tightenDatabaseFiles(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodSync(path, PRIVATE_FILE_MODE);
  }
}

/** Runs `work` in one transaction (BEGIN IMMEDIATE … COMMIT), rolled back when it throws. */
export function inTransaction<T>(db: SqliteDatabase, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * Copies a database that other connections may be writing into `destination` (a new file, made 0600): SQLite's online
 * backup (`node:sqlite`'s `backup`, Node 22.16 and newer), else `VACUUM INTO` (22.13–22.15). Both read one consistent
 * state (every committed transaction, the WAL included) while writers go on; the copy is one self-contained file.
 */
export async function backupSqliteFile(source: string, destination: string): Promise<void> {
  const sqlite = loadSqlite() as typeof import('node:sqlite') & {
    backup?: (db: DatabaseSyncType, path: string) => Promise<number>;
  };
  const db = new sqlite.DatabaseSync(source);
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    if (typeof sqlite.backup === 'function') await sqlite.backup(db, destination);
    else db.prepare('VACUUM INTO ?').run(destination);
  } finally {
    db.close();
  }
  tightenDatabaseFiles(destination);
}
