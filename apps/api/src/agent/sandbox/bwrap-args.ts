/**
 * The bubblewrap (`bwrap`) command line of one confined command. Pure apart from looking at the file system (which
 * system directories exist, whether a protected path is a file or a directory), so it can be unit-tested with real
 * temporary directories.
 *
 * The sandbox is built from nothing: an empty root, the system directories bound read-only (an allowlist, never `/`),
 * a fresh `/proc` of a new PID namespace, a minimal `/dev`, a private `/tmp`, and the workspace bound read-write at its
 * real path as the working directory. Every protected path (data, memory, log and config directories, the repository's
 * `.env`) that would still be visible — because it lies under a system directory, inside the workspace, or the
 * workspace lies inside it — is covered by an empty tmpfs (directories) or `/dev/null` (files).
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

/** Host directories made visible read-only at the same path; symlinks among them (merged /usr) are recreated. */
export const SANDBOX_SYSTEM_DIRS: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/**
 * Files and directories under the system directories that hold host secrets; they are only readable by root, which
 * the sandboxed command may be when the server runs as root.
 */
export const SANDBOX_SYSTEM_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/security/opasswd',
  '/etc/ssl/private',
];

/** The child fd bwrap writes its JSON status to (`child-pid`: the host pid of the namespace's init). */
export const BWRAP_INFO_FD = 3;

export interface BwrapArgsInput {
  /** the command's working directory and the only writable host path (a real path) */
  workspace: string;
  /** false: the command gets its own empty network namespace (`--unshare-net`) */
  network: boolean;
  /** host paths that must not be visible inside (missing ones are ignored) */
  protectedPaths: readonly string[];
  /**
   * extra host directories made visible read-only: a string at its own path, `{ source, target }` at `target` (e.g. a
   * Skill's directory at `/skills/<name>`); bound last, so a target may re-expose a directory a protected path hides
   */
  readOnlyBinds?: ReadonlyArray<string | ReadOnlyBind>;
  /** the working directory inside the sandbox: the workspace (default) or a path below it, or at or below a read-only bind's target */
  chdir?: string;
  /** the complete environment of the command */
  env: Record<string, string>;
  /** drop every capability (needed when the server runs as root: bwrap then keeps them otherwise) */
  dropCapabilities: boolean;
  /** false: no `--info-fd` (the browser's Chromium keeps fds 3 and 4 for its DevTools pipe); default true */
  infoFd?: boolean;
  /** defaults to SANDBOX_SYSTEM_DIRS (tests pass their own) */
  systemDirs?: readonly string[];
  /** defaults to SANDBOX_SYSTEM_SECRETS plus the SSH host keys */
  systemSecrets?: readonly string[];
}

/** A host directory (`source`) bound read-only at `target` inside the sandbox (an absolute, normalized path). */
export interface ReadOnlyBind {
  source: string;
  target: string;
}

/** Targets a read-only bind may not take: the system directories and the sandbox's own mounts. */
const RESERVED_TARGETS: readonly string[] = ['/', '/proc', '/dev', '/tmp'];

export class SandboxArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxArgsError';
  }
}

/** True when `target` is `root` or lies below it, compared component-wise. */
export function isWithinPath(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

type Kind = 'dir' | 'file' | 'symlink' | 'missing';

function kindOf(p: string): Kind {
  try {
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) return 'symlink';
    return stat.isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** The mount that hides `p` (a real, existing path): an empty tmpfs over a directory, /dev/null over anything else. */
function maskArgs(p: string): string[] {
  return kindOf(p) === 'dir' ? ['--tmpfs', p] : ['--ro-bind', '/dev/null', p];
}

function sshHostKeys(): string[] {
  try {
    return readdirSync('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => path.join('/etc/ssh', name));
  } catch {
    return [];
  }
}

/** The bwrap arguments up to (not including) the command. Throws SandboxArgsError for an unusable layout. */
export function buildBwrapArgs(input: BwrapArgsInput): string[] {
  const workspace = realOrNull(input.workspace);
  if (workspace === null || kindOf(workspace) !== 'dir') {
    throw new SandboxArgsError(`the workspace ${input.workspace} is not a directory`);
  }
  const args: string[] = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts'];
  if (!input.network) args.push('--unshare-net');
  if (input.dropCapabilities) args.push('--cap-drop', 'ALL');
  if (input.infoFd !== false) args.push('--info-fd', String(BWRAP_INFO_FD));

  // the system, read-only; what is bound decides what a protected path must be hidden from
  const visibleRoots: string[] = [];
  for (const dir of input.systemDirs ?? SANDBOX_SYSTEM_DIRS) {
    const kind = kindOf(dir);
    if (kind === 'symlink') {
      args.push('--symlink', readlinkSync(dir), dir);
    } else if (kind === 'dir') {
      args.push('--ro-bind', dir, dir);
      visibleRoots.push(realOrNull(dir) ?? dir);
    }
  }
  const underSystem = (p: string) => visibleRoots.some((root) => isWithinPath(root, p));

  // a resolv.conf that points outside the bound directories (systemd-resolved: /run/...) is bound on its own
  const resolv = realOrNull('/etc/resolv.conf');
  if (resolv !== null && kindOf('/etc/resolv.conf') === 'symlink' && !underSystem(resolv)) {
    args.push('--ro-bind', resolv, resolv);
  }
  for (const secret of [...(input.systemSecrets ?? [...SANDBOX_SYSTEM_SECRETS, ...sshHostKeys()])]) {
    const real = realOrNull(secret);
    if (real !== null && underSystem(real)) args.push(...maskArgs(real));
  }

  // fresh /proc of the new PID namespace (its sysctls read-only), minimal /dev, private /tmp
  args.push('--proc', '/proc', '--ro-bind-try', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger');
  args.push('--dev', '/dev', '--tmpfs', '/tmp');

  const readOnly = (input.readOnlyBinds ?? []).map((bind) => {
    const source = typeof bind === 'string' ? bind : bind.source;
    const real = realOrNull(source);
    if (real === null) throw new SandboxArgsError(`the read-only bind ${source} does not exist`);
    if (typeof bind === 'string') return { source: real, target: real };
    const target = bind.target;
    if (!path.isAbsolute(target) || path.posix.normalize(target) !== target || target.endsWith('/')) {
      throw new SandboxArgsError(`the read-only bind target ${target} is not an absolute, normalized path`);
    }
    const reserved = [...RESERVED_TARGETS, ...(input.systemDirs ?? SANDBOX_SYSTEM_DIRS)];
    if (reserved.some((r) => (r === '/' ? target === '/' : isWithinPath(r, target))) || isWithinPath(target, workspace) || isWithinPath(workspace, target)) {
      throw new SandboxArgsError(`the read-only bind target ${target} would cover a system directory or the workspace`);
    }
    return { source: real, target };
  });
  const hidden = [...new Set(input.protectedPaths.map(realOrNull).filter((p): p is string => p !== null))].sort();
  for (const bind of readOnly) {
    const exposed = hidden.find((p) => isWithinPath(bind.source, p));
    if (exposed !== undefined) throw new SandboxArgsError(`the read-only bind ${bind.source} would expose ${exposed}`);
  }
  const chdir = input.chdir ?? workspace;
  if (!isWithinPath(workspace, chdir) && !readOnly.some((bind) => bind.source !== bind.target && isWithinPath(bind.target, chdir))) {
    throw new SandboxArgsError(`the working directory ${chdir} is neither in the workspace nor inside a read-only bind`);
  }
  const insideWorkspace = (p: string) => p !== workspace && isWithinPath(workspace, p);

  // protected paths the system binds would show (e.g. a data dir under /usr/local or /etc); one that contains the
  // workspace is hidden before the workspace is bound into it
  for (const p of hidden) if (!insideWorkspace(p) && underSystem(p)) args.push(...maskArgs(p));

  args.push('--bind', workspace, workspace);
  // protected paths inside the workspace (e.g. WORKSPACE_DIR is a parent of the data dir)
  for (const p of hidden) if (insideWorkspace(p)) args.push(...maskArgs(p));

  for (const bind of readOnly) args.push('--ro-bind', bind.source, bind.target);

  args.push('--chdir', chdir, '--clearenv');
  for (const [name, value] of Object.entries(input.env)) args.push('--setenv', name, value);
  return args;
}
