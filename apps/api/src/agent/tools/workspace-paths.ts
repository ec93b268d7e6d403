/**
 * Path confinement for the file tools (read_file, write_file, edit_file, list_dir, glob, grep).
 *
 * Every user-given path is resolved against the realpath of WORKSPACE_DIR and accepted only when both the lexical
 * result and its realpath (the target's, or its nearest existing ancestor's when the target does not exist yet) are
 * inside the workspace, compared component-wise (`/w/ws` never admits `/w/ws_evil`). NUL bytes, escaping `..`,
 * absolute paths outside the workspace, symbolic links pointing out and links that cannot be resolved are refused.
 * Messages show the path the user gave, never an absolute host path.
 */
import { lstatSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { mkdirPrivateSync } from '../../common/private-fs';

/** A refused or failed path operation; the message is safe to show to the model and the user. */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspacePathError';
  }
}

export interface ResolvedPath {
  /** the real absolute path to operate on (never shown to anyone) */
  absolute: string;
  /** path relative to the workspace root with `/` separators; '' for the root itself */
  relative: string;
  /** what messages show: the path as the user gave it */
  display: string;
}

export const PROTECTED_SKILL_MESSAGE =
  'this path is inside a protected Skill directory and cannot be changed with the generic file tools; ' +
  'call agent_skill_manage to create or update Skills.';

export const PROTECTED_STATE_MESSAGE =
  "this path holds the server's own settings (approvals, Skill grants, MCP servers, model settings or keys) and " +
  'cannot be changed with the model\'s tools; only the owner changes them, in the console.';

/** True when `target` is `root` or lies below it, compared component-wise. */
export function isWithin(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** Turns a file-system error into a message without host paths. */
export function describeFsError(error: unknown, display: string): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return `not found: ${display}`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied: ${display}`;
    case 'EISDIR':
      return `${display} is a directory`;
    case 'ENOTDIR':
      return `a parent of ${display} is not a directory`;
    case 'ELOOP':
      return `${display} is a symbolic link; access denied`;
    case 'ENOSPC':
      return `no space left on device while writing ${display}`;
    case 'EROFS':
      return `read-only file system: ${display}`;
    case 'EEXIST':
      return `${display} already exists`;
    default: {
      const code = errorCode(error);
      return `file system error${code ? ` (${code})` : ''} on ${display}`;
    }
  }
}

/**
 * realpath of `target`, or of its nearest existing ancestor joined with the missing tail. A path component that
 * exists but cannot be resolved (a dangling or looping symbolic link) throws WorkspacePathError.
 *
 * The system calls are synchronous on purpose: resolving a path reads cached directory entries (microseconds), while
 * an asynchronous call costs a thread-pool round trip, and every file tool call starts here.
 */
export async function realpathAllowMissing(target: string, display: string): Promise<string> {
  let current = target;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return tail.length === 0 ? real : path.join(real, ...tail.reverse());
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ELOOP') throw new WorkspacePathError(`path '${display}' is a symbolic link that cannot be resolved; access denied`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new WorkspacePathError(describeFsError(error, display));
      let exists = false;
      try {
        exists = lstatSync(current, { throwIfNoEntry: false }) !== undefined;
      } catch {
        // not there (or not reachable): treated like missing
      }
      if (exists && code === 'ENOENT') {
        throw new WorkspacePathError(`path '${display}' is a symbolic link that cannot be resolved; access denied`);
      }
      const parent = path.dirname(current);
      if (parent === current) throw new WorkspacePathError(`not found: ${display}`);
      tail.push(path.basename(current));
      current = parent;
    }
  }
}

export class WorkspacePaths {
  /** realpath of the workspace directory */
  readonly root: string;
  private readonly configuredRoot: string;
  private readonly protectedRoots: readonly string[];
  private readonly stateRoots: readonly string[];

  /**
   * Creates the workspace directory when missing and records its realpath (run once at start).
   * `protectedRoots` (the skill roots) and `stateRoots` (what decides the model's permissions: approvals and grants,
   * MCP catalogs, settings and keys) are refused for writes wherever the workspace points.
   */
  constructor(workspaceDir: string, protectedRoots: readonly string[], stateRoots: readonly string[] = []) {
    this.configuredRoot = path.resolve(workspaceDir);
    mkdirPrivateSync(this.configuredRoot);
    this.root = realpathSync(this.configuredRoot);
    this.protectedRoots = protectedRoots.map((root) => path.resolve(root));
    this.stateRoots = stateRoots.map((root) => path.resolve(root));
  }

  /** Resolves a user-given path (relative to the workspace, or absolute inside it) to its confined real path. */
  async resolve(userPath: string): Promise<ResolvedPath> {
    const display = userPath === '' ? '.' : userPath;
    if (userPath.includes('\0')) throw new WorkspacePathError('path contains a NUL byte; access denied');
    const outside = () => new WorkspacePathError(`path '${display}' is outside the workspace; access denied`);
    const lexical = path.resolve(this.root, userPath);
    if (!path.isAbsolute(userPath) && !isWithin(this.root, lexical)) throw outside();
    if (path.isAbsolute(userPath) && !isWithin(this.root, lexical) && !isWithin(this.configuredRoot, lexical)) {
      throw outside();
    }
    const real = await realpathAllowMissing(lexical, display);
    if (!isWithin(this.root, real)) throw outside();
    return { absolute: real, relative: this.relative(real), display };
  }

  /** Like `resolve`, and also refuses paths inside a protected Skill root (for write_file / edit_file). */
  async resolveForWrite(userPath: string): Promise<ResolvedPath> {
    const resolved = await this.resolve(userPath);
    if (await this.isProtected(resolved.absolute, this.protectedRoots)) throw new WorkspacePathError(PROTECTED_SKILL_MESSAGE);
    if (await this.isProtected(resolved.absolute, this.stateRoots)) throw new WorkspacePathError(PROTECTED_STATE_MESSAGE);
    return resolved;
  }

  /** The workspace-relative form of a real path inside the workspace, with `/` separators. */
  relative(real: string): string {
    return path.relative(this.root, real).split(path.sep).join('/');
  }

  private async isProtected(real: string, roots: readonly string[]): Promise<boolean> {
    for (const root of roots) {
      let realRoot: string;
      try {
        realRoot = await realpathAllowMissing(root, 'protected root');
      } catch {
        realRoot = root;
      }
      if (isWithin(realRoot, real) || isWithin(root, real)) return true;
    }
    return false;
  }
}
