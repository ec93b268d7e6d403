/**
 * Bounded, confined glob walking shared by `glob` and `grep` (SECURITY.md, "Workspace confinement of the file tools"):
 * tinyglobby with symbolic links neither followed nor reported, patterns applied at any depth below the base (openspec
 * builtin-tools, like Python's rglob), `..` and absolute patterns refused, and the walk stopped after a number of
 * directory entries or a time budget.
 */
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { glob, type GlobOptions } from 'tinyglobby';
import { isWithin, WorkspacePathError } from './workspace-paths';

export interface WalkLimits {
  /** directory entries read before the walk stops */
  maxEntries: number;
  /** wall-clock budget of the walk */
  timeoutMs: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxEntries: 100_000, timeoutMs: 10_000 };

export interface WalkResult {
  /** matches relative to the base directory, `/`-separated; directories end with `/` */
  matches: string[];
  /** true when the walk stopped early (entry or time budget) */
  incomplete: boolean;
}

/** Validates a user glob and makes it apply at any depth (`*.py` → `**\/*.py`). */
export function normalizeGlobPattern(pattern: string, argument: string): string {
  const trimmed = pattern.trim();
  if (trimmed === '') throw new WorkspacePathError(`${argument} must not be empty`);
  if (trimmed.includes('\0')) throw new WorkspacePathError(`${argument} contains a NUL byte`);
  if (trimmed.startsWith('/') || trimmed.startsWith('\\') || /^[A-Za-z]:/.test(trimmed) || trimmed.startsWith('~')) {
    throw new WorkspacePathError(`${argument} must be relative to the search directory`);
  }
  const segments = trimmed.split(/[\\/]+/);
  if (segments.some((segment) => segment === '..')) {
    throw new WorkspacePathError(`${argument} must not contain '..'`);
  }
  let normalized = segments.filter((segment, index) => !(segment === '.' && index < segments.length - 1)).join('/');
  if (normalized.endsWith('/')) normalized = normalized.slice(0, -1);
  return normalized.startsWith('**/') || normalized === '**' ? normalized : `**/${normalized}`;
}

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: nodeFs.Dirent[]) => void;

/** Walks `baseAbsolute` (a confined real directory) for `pattern` within the limits. */
export async function walkGlob(
  baseAbsolute: string,
  pattern: string,
  options: { onlyFiles: boolean; limits: WalkLimits; signal?: AbortSignal },
): Promise<WalkResult> {
  const controller = new AbortController();
  let entriesSeen = 0;
  const timer = setTimeout(() => controller.abort(), options.limits.timeoutMs);
  const onOuterAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const countingReaddir = (dir: string, opts: { withFileTypes: true }, callback: ReaddirCallback) => {
    nodeFs.readdir(dir, opts, (error, entries) => {
      if (!error) {
        entriesSeen += entries.length;
        if (entriesSeen > options.limits.maxEntries) controller.abort();
      }
      callback(error, entries);
    });
  };
  const globOptions: GlobOptions = {
    cwd: baseAbsolute,
    followSymbolicLinks: false,
    onlyFiles: options.onlyFiles,
    dot: true,
    expandDirectories: false,
    absolute: false,
    signal: controller.signal,
    fs: { readdir: countingReaddir as unknown as typeof nodeFs.readdir },
  };
  try {
    const found = await glob(pattern, globOptions);
    const matches = found
      .filter((entry) => {
        const clean = entry.endsWith('/') ? entry.slice(0, -1) : entry;
        return clean !== '' && isWithin(baseAbsolute, path.resolve(baseAbsolute, clean));
      })
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    options.signal?.throwIfAborted();
    return { matches, incomplete: controller.signal.aborted };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}
