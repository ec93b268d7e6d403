/**
 * Running one exec command as a process (openspec exec-sandbox "Requirement: Stopping a confined command"): the shell
 * command wrapped by the sandbox (or unconfined), stdin closed, output captured up to a cap, a timeout; stopping it
 * (timeout, cap, cancel) sends SIGTERM and, after a grace period, SIGKILL — unconfined to its process group,
 * sandboxed to every process inside and then the sandbox's init, which takes down everything however it detached.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  endSandbox,
  type ExecSandbox,
  killSandbox,
  parseBwrapInfo,
  pidNamespaceOf,
  type SandboxedSpawn,
  signalSandboxMembers,
} from '../sandbox/exec-sandbox';

export interface ExecOptions {
  timeoutMs: number;
  /** time between SIGTERM and SIGKILL */
  killGraceMs: number;
  /** bytes of stdout + stderr kept; more stops the command */
  maxCaptureBytes: number;
  /** the whole environment of the command (already allowlisted) */
  env: Record<string, string>;
  /** how commands are started; default: unconfined */
  sandbox?: ExecSandbox;
}

export const DEFAULT_EXEC_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The command's environment: the allowlisted base plus HOME/PWD pointing at the workspace. */
export function buildExecEnvironment(base: Record<string, string> | undefined, workspaceRoot: string): Record<string, string> {
  return {
    PATH: DEFAULT_EXEC_PATH,
    LANG: 'C.UTF-8',
    ...(base ?? {}),
    HOME: workspaceRoot,
    PWD: workspaceRoot,
    SHELL: '/bin/sh',
    TERM: 'dumb',
  };
}

type Ending = 'exited' | 'timeout' | 'capped' | 'cancelled';

interface RunOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  ending: Ending;
  spawnError?: string;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Runs one wrapped command (see ExecSandbox.wrap); never rejects. */
export function runShell(spec: SandboxedSpawn, options: ExecOptions, signal: AbortSignal): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let captured = 0;
    let ending: Ending = 'exited';
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let exited = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const stdio: Array<'ignore' | 'pipe'> = ['ignore', 'pipe', 'pipe'];
    if (spec.infoFd !== null) {
      while (stdio.length < spec.infoFd) stdio.push('ignore');
      stdio.push('pipe');
    }
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      detached: true,
      stdio,
      env: spec.env,
      windowsHide: true,
    });

    // bwrap reports the host pid of the sandbox's init (pid 1 inside) on its info fd
    let sandboxInit: number | null = null;
    let infoText = '';
    /** a stop asked for before bwrap reported its init: SIGTERM is sent once it does */
    let termPending = false;
    let sandboxNamespace: string | null = null;
    if (spec.infoFd !== null) {
      const info = child.stdio[spec.infoFd] as NodeJS.ReadableStream | null | undefined;
      info?.on('data', (chunk: Buffer) => {
        if (sandboxInit !== null || infoText.length > 4096) return;
        infoText += chunk.toString('utf8');
        sandboxInit = parseBwrapInfo(infoText);
        if (sandboxInit !== null) sandboxNamespace = pidNamespaceOf(sandboxInit);
        if (sandboxInit !== null && termPending) signalSandboxMembers(sandboxInit, 'SIGTERM');
      });
      info?.on('error', () => undefined);
    }

    const finish = (spawnError?: string) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({
        code: exitCode,
        signal: exitSignal,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr),
        ending,
        spawnError,
      });
    };

    /**
     * SIGTERM what runs, SIGKILL it after the grace period; give up on the pipes after twice that. In the sandbox
     * SIGTERM goes to every process inside (the shell, its jobs, whatever detached) and SIGKILL to the sandbox's
     * init, whose death kills the whole PID namespace. bwrap itself is not signalled while it sets the sandbox up:
     * killed before its init has armed --die-with-parent, it would leave the sandbox running. A stop before bwrap
     * reported its init is carried out when it does; only if it never does is bwrap killed after the grace period.
     */
    let stopping = false;
    const terminate = () => {
      if (spec.infoFd === null) killGroup(child, 'SIGTERM');
      else if (sandboxInit !== null) signalSandboxMembers(sandboxInit, 'SIGTERM');
      else termPending = true;
    };
    const hardKill = () => {
      if (sandboxInit !== null) {
        if (!exited) killSandbox(sandboxInit, sandboxNamespace);
      } else {
        killGroup(child, 'SIGKILL');
      }
    };
    const stop = (reason: Ending) => {
      if (stopping) return;
      stopping = true;
      if (ending === 'exited') ending = reason;
      terminate();
      timers.push(
        setTimeout(() => {
          hardKill();
          timers.push(
            setTimeout(() => {
              // something that left the group still holds the pipes: stop reading and answer
              child.stdout?.destroy();
              child.stderr?.destroy();
              finish();
            }, options.killGraceMs),
          );
        }, options.killGraceMs),
      );
    };

    const collect = (sink: Buffer[]) => (chunk: Buffer) => {
      if (captured >= options.maxCaptureBytes) return;
      const room = options.maxCaptureBytes - captured;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      sink.push(kept);
      captured += kept.length;
      if (captured >= options.maxCaptureBytes) stop('capped');
    };
    child.stdout?.on('data', collect(stdout));
    child.stderr?.on('data', collect(stderr));

    const onAbort = () => stop('cancelled');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });

    timers.push(setTimeout(() => stop('timeout'), options.timeoutMs));

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(error.code ?? 'spawn failed');
    });
    child.on('exit', (code, exitedBy) => {
      exited = true;
      exitCode = code;
      exitSignal = exitedBy;
      // anything still running in the group (background jobs, grandchildren) goes too; in the sandbox the kernel
      // has already killed them with its init, before bwrap could exit
      if (!stopping && killGroup(child, 'SIGTERM')) {
        const pgid = child.pid;
        const hardKill = setTimeout(() => {
          if (pgid === undefined) return;
          try {
            process.kill(-pgid, 0);
            process.kill(-pgid, 'SIGKILL');
          } catch {
            // the group is gone
          }
        }, options.killGraceMs);
        hardKill.unref();
        timers.push(
          setTimeout(() => {
            child.stdout?.destroy();
            child.stderr?.destroy();
            finish();
          }, options.killGraceMs * 2),
        );
      }
    });
    child.on('close', () => {
      if (sandboxInit === null) finish();
      else void endSandbox(sandboxInit, sandboxNamespace, options.killGraceMs).then(() => finish());
    });
  });
}

