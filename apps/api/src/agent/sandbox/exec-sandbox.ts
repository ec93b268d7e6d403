/**
 * The exec sandbox: how a shell command is started (confined in bubblewrap, or unconfined), and how a running
 * sandbox is stopped as a whole. The exec tool and Skill scripts start commands only through `ExecSandbox.wrap`.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import type { ExecSandboxMode, ExecSandboxStatus } from '@cashcode/contracts';
import { BWRAP_INFO_FD, buildBwrapArgs, type ReadOnlyBind } from './bwrap-args';

export interface SandboxWrapOptions {
  /** the working directory (the workspace, a real path): inside the sandbox the only writable host directory */
  cwd: string;
  /** the command's complete environment (already allowlisted) */
  env: Record<string, string>;
  /** extra host directories visible read-only: at their own path, or `{ source, target }` (a Skill at /skills/<name>) */
  readOnlyBinds?: ReadonlyArray<string | ReadOnlyBind>;
  /** sandboxed only: the working directory inside, below a read-only bind's target (default: the workspace) */
  chdir?: string;
}

/** What to spawn for one command. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  /** the host working directory of the spawned process */
  cwd: string;
  /** the spawned process's environment (for bwrap the same clean one: its own /proc/1/environ is visible inside) */
  env: Record<string, string>;
  sandboxed: boolean;
  /** child fd on which bwrap reports `{"child-pid": <host pid of the sandbox's init>}`; null when unconfined */
  infoFd: number | null;
}

export interface ExecSandbox {
  status(): ExecSandboxStatus;
  /** how to start `/bin/sh -c command`; throws when the command cannot be started as configured */
  wrap(command: string, options: SandboxWrapOptions): SandboxedSpawn;
}

/** exec as it ran before the sandbox: `/bin/sh -c` in the workspace with the allowlisted environment. */
export class UnconfinedSandbox implements ExecSandbox {
  constructor(private readonly state: ExecSandboxStatus = { mode: 'off', active: false, kind: null, network: true, reason: 'no sandbox configured' }) {}

  status(): ExecSandboxStatus {
    return { ...this.state };
  }

  wrap(command: string, options: SandboxWrapOptions): SandboxedSpawn {
    return { file: '/bin/sh', args: ['-c', command], cwd: options.cwd, env: options.env, sandboxed: false, infoFd: null };
  }
}

export interface BubblewrapSandboxOptions {
  bwrapPath: string;
  mode: ExecSandboxMode;
  network: boolean;
  /** host paths never visible inside (data, memory, log and config dirs, the repository's .env) */
  protectedPaths: readonly string[];
  /** default: when the server runs as root */
  dropCapabilities?: boolean;
}

export class BubblewrapSandbox implements ExecSandbox {
  constructor(private readonly options: BubblewrapSandboxOptions) {}

  status(): ExecSandboxStatus {
    return { mode: this.options.mode, active: true, kind: 'bwrap', network: this.options.network };
  }

  wrap(command: string, options: SandboxWrapOptions): SandboxedSpawn {
    // inside the sandbox the host TMPDIR does not exist; HOME and PWD are the workspace's path inside
    const env = { ...options.env, HOME: options.cwd, PWD: options.chdir ?? options.cwd, TMPDIR: '/tmp' };
    const args = buildBwrapArgs({
      workspace: options.cwd,
      network: this.options.network,
      protectedPaths: this.options.protectedPaths,
      readOnlyBinds: options.readOnlyBinds,
      chdir: options.chdir,
      env,
      dropCapabilities: this.options.dropCapabilities ?? process.getuid?.() === 0,
    });
    return {
      file: this.options.bwrapPath,
      args: [...args, '/bin/sh', '-c', command],
      cwd: options.cwd,
      env,
      sandboxed: true,
      infoFd: BWRAP_INFO_FD,
    };
  }
}

/** The absolute path of an executable on a PATH-style list, or null. */
export function findExecutable(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Parses bwrap's `--info-fd` JSON; null until it is complete. */
export function parseBwrapInfo(text: string): number | null {
  try {
    const info = JSON.parse(text) as { 'child-pid'?: unknown };
    const pid = info['child-pid'];
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

/** The PID namespace (`pid:[inode]`) of a host process, or null when it is gone. */
export function pidNamespaceOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/**
 * Sends `signal` to every process of the PID namespace whose init has host pid `initPid`, except the init itself.
 * Returns how many were signalled. (Killing the init with SIGKILL ends them all at once: see `killSandbox`.)
 */
export function signalSandboxMembers(initPid: number, signal: NodeJS.Signals): number {
  const namespace = pidNamespaceOf(initPid);
  if (namespace === null) return 0;
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === initPid) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) !== namespace) continue;
      process.kill(Number(entry), signal);
      count += 1;
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return count;
}

/**
 * SIGKILLs the sandbox's init: the kernel then kills every process of its PID namespace, however it was started.
 * `namespace` (from pidNamespaceOf when the sandbox started) guards against a reused pid.
 */
export function killSandbox(initPid: number, namespace: string | null): boolean {
  if (namespace === null || pidNamespaceOf(initPid) !== namespace) return false;
  try {
    process.kill(initPid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * Once bwrap has exited: makes sure the sandbox's init is gone (SIGKILL if it still runs: bwrap's own exit kills it
 * only asynchronously, through --die-with-parent) and resolves when it is — its death has then taken every other
 * process of the sandbox with it. Gives up after `timeoutMs`.
 */
export async function endSandbox(initPid: number, namespace: string | null, timeoutMs: number): Promise<void> {
  if (namespace === null) return;
  killSandbox(initPid, namespace);
  const deadline = Date.now() + timeoutMs;
  while (pidNamespaceOf(initPid) === namespace && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface ProbeResult {
  ok: boolean;
  /** why the probe failed */
  reason?: string;
}

/** Runs `exit 0` through the sandbox exactly as a command would run; ok when it exits 0 within `timeoutMs`. */
export function probeSandbox(sandbox: ExecSandbox, options: SandboxWrapOptions, timeoutMs = 10_000): Promise<ProbeResult> {
  return new Promise<ProbeResult>((resolve) => {
    let spec: SandboxedSpawn;
    try {
      spec = sandbox.wrap('exit 0', options);
    } catch (error) {
      resolve({ ok: false, reason: error instanceof Error ? error.message : String(error) });
      return;
    }
    const stdio: Array<'ignore' | 'pipe'> = ['ignore', 'ignore', 'pipe'];
    if (spec.infoFd !== null) {
      while (stdio.length < spec.infoFd) stdio.push('ignore');
      stdio.push('pipe');
    }
    const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio, detached: true });
    let stderr = '';
    if (spec.infoFd !== null) (child.stdio[spec.infoFd] as NodeJS.ReadableStream | null)?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      resolve({ ok: false, reason: `the probe run did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `${spec.file} could not be started (${error.code ?? error.message})` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve({ ok: true });
        return;
      }
      const said = stderr.trim().split('\n')[0]?.trim();
      const how = code !== null ? `exit code ${code}` : `signal ${signal}`;
      resolve({ ok: false, reason: `the probe run failed (${how})${said ? `: ${said}` : ''}` });
    });
  });
}
