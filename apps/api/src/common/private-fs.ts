/**
 * Owner-only files: everything the server creates under its data, memory, log and config directories holds the user's
 * chats, memory, settings and logs, so it is created 0700 (directories) / 0600 (files) whatever the process umask, and
 * what an earlier version (or a copy, or the user) left readable is tightened at boot.
 *
 * Every writer goes through these helpers instead of calling `fs.mkdir` / `fs.writeFile` / `fs.open` / `fs.cp` with the
 * defaults (0777 / 0666 narrowed by the umask, usually 0755 / 0644). The mode of a new file or directory is set at
 * creation (a umask never adds bits, so 0600 / 0700 stay as they are unless the umask removes owner bits, which
 * `mkdirPrivate` and `writeFilePrivate` then repair with chmod). Renames keep the mode of what is renamed, which is why
 * temp files and staging directories are created private too; `copyTreePrivate` tightens what `fs.cp` copied, because
 * a copy keeps the source's modes.
 *
 * The workspace is the user's own folder (WORKSPACE_DIR may point at an existing project): files and directories the
 * tools create there are private as well (`write_file` keeps the mode of a file it overwrites), but the boot tightening
 * never walks it.
 */
import {
  chmodSync,
  closeSync,
  type CopyOptions,
  createWriteStream,
  lstatSync,
  mkdirSync,
  openSync,
  promises as fs,
  readdirSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import * as path from 'node:path';

/** Mode of every directory the server creates. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file the server creates. */
export const PRIVATE_FILE_MODE = 0o600;
/** Group and other permission bits: none is ever set on what the server owns. */
const GROUP_OTHER_BITS = 0o077;

/** The directories from `first` (the first one `mkdir -p` created) down to `dir`. */
function createdChain(first: string, dir: string): string[] {
  const chain = [first];
  const rest = path.relative(first, dir);
  if (rest === '' || rest.startsWith('..')) return chain;
  let current = first;
  for (const segment of rest.split(path.sep)) {
    current = path.join(current, segment);
    chain.push(current);
  }
  return chain;
}

/** `mkdir -p` where every directory it creates is 0700; existing directories are left as they are. */
export async function mkdirPrivate(dir: string): Promise<void> {
  const first = await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (const created of createdChain(first, path.resolve(dir))) await fs.chmod(created, PRIVATE_DIR_MODE);
}

/** Synchronous {@link mkdirPrivate} (start-up code that cannot await). */
export function mkdirPrivateSync(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (const created of createdChain(first, path.resolve(dir))) chmodSync(created, PRIVATE_DIR_MODE);
}

/** Writes a whole file (created 0600; an existing file is made 0600 too). `flag` as for fs.writeFile (default `w`). */
export async function writeFilePrivate(file: string, data: string | Uint8Array, flag = 'w'): Promise<void> {
  const handle = await fs.open(file, flag, PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.chmod(PRIVATE_FILE_MODE);
  } finally {
    await handle.close();
  }
}

/** Synchronous {@link writeFilePrivate} (start-up code that cannot await). */
export function writeFilePrivateSync(file: string, data: string | Uint8Array): void {
  const fd = openSync(file, 'w', PRIVATE_FILE_MODE);
  try {
    writeFileSync(fd, data);
    chmodSync(file, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** `fs.open` creating the file 0600 (an existing file keeps its mode: the boot tightening fixed old ones). */
export function openPrivate(file: string, flags: string | number): Promise<fs.FileHandle> {
  return fs.open(file, flags, PRIVATE_FILE_MODE);
}

/** Synchronous {@link openPrivate}: returns the descriptor. */
export function openPrivateSync(file: string, flags: string | number): number {
  return openSync(file, flags, PRIVATE_FILE_MODE);
}

/** A write stream whose file is created 0600. */
export function createPrivateWriteStream(file: string, flags = 'w'): WriteStream {
  return createWriteStream(file, { flags, mode: PRIVATE_FILE_MODE });
}

/** `fs.cp` followed by tightening the copy (a copy keeps the source's modes). Symlinks are never followed. */
export async function copyTreePrivate(source: string, destination: string, options: CopyOptions): Promise<void> {
  await fs.cp(source, destination, options);
  // a chmod that fails on a copy just made by this process is not expected; the data dir above it is 0700 anyway
  tightenTree(destination, { maxEntries: Number.POSITIVE_INFINITY });
}

export interface TightenOptions {
  /** paths neither changed nor entered (e.g. the workspace) */
  skip?: readonly string[];
  /** stop after visiting this many entries (default 200,000) */
  maxEntries?: number;
}

export interface TightenResult {
  /** entries whose mode was changed */
  changed: number;
  /** entries whose mode could not be changed (e.g. owned by another user) */
  failed: number;
  /** the walk stopped at maxEntries */
  truncated: boolean;
}

/** The owner-only mode for an entry: directories 0700, other entries their owner bits only (0644 → 0600, 0755 → 0700). */
function privateMode(mode: number, isDirectory: boolean): number {
  return isDirectory ? PRIVATE_DIR_MODE : mode & 0o700;
}

/**
 * Removes the group/other bits of `root` and everything below it. Iterative and bounded; uses lstat, so symbolic links
 * are neither followed nor changed. A missing root is fine (nothing to do). Synchronous on purpose: it runs at boot,
 * before the server listens, and on small copied trees, where one lstat per entry without a thread-pool round trip is
 * about ten times faster (thousands of chats are walked in tens of milliseconds).
 */
export function tightenTree(root: string, options: TightenOptions = {}): TightenResult {
  const skip = new Set((options.skip ?? []).map((entry) => path.resolve(entry)));
  const maxEntries = options.maxEntries ?? 200_000;
  const result: TightenResult = { changed: 0, failed: 0, truncated: false };
  const pending = [path.resolve(root)];
  let visited = 0;
  while (pending.length > 0) {
    const current = pending.pop() as string;
    if (skip.has(current)) continue;
    if (visited >= maxEntries) {
      result.truncated = true;
      break;
    }
    visited++;
    const stat = lstatSync(current, { throwIfNoEntry: false });
    // missing (removed meanwhile), a link (never followed) or a socket/device: nothing to tighten
    if (stat === undefined || stat.isSymbolicLink()) continue;
    const isDirectory = stat.isDirectory();
    if (!isDirectory && !stat.isFile()) continue;
    if ((stat.mode & GROUP_OTHER_BITS) !== 0 || (isDirectory && (stat.mode & 0o700) !== 0o700)) {
      try {
        chmodSync(current, privateMode(stat.mode, isDirectory));
        result.changed++;
      } catch {
        result.failed++;
      }
    }
    if (!isDirectory) continue;
    let names: string[];
    try {
      names = readdirSync(current);
    } catch {
      result.failed++;
      continue;
    }
    for (const name of names) pending.push(path.join(current, name));
  }
  return result;
}

/** Whether `child` is `parent` or inside it. */
function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export interface PrivateRootsResult extends TightenResult {
  root: string;
}

/**
 * Tightens each root (those nested in another root are walked with it), skipping `skip` (the workspace). Returns one
 * result per walked root.
 */
export function tightenPrivateRoots(roots: readonly string[], skip: readonly string[]): PrivateRootsResult[] {
  const resolved = [...new Set(roots.map((root) => path.resolve(root)))];
  const top = resolved.filter((root) => !resolved.some((other) => other !== root && isWithin(other, root)));
  return top.map((root) => ({ root, ...tightenTree(root, { skip }) }));
}
