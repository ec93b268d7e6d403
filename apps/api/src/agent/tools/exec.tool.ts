/**
 * `exec`: a shell command (`/bin/sh -c`) in the workspace, stdin closed, with an environment built from an allowlist
 * (no model keys, tokens or MCP secrets), output capped, and a timeout. When the exec sandbox is active the command
 * runs inside bubblewrap (see ../sandbox): its own PID namespace, the system read-only, the workspace the only
 * writable host directory, and none of the server's data, memory, log or config directories visible. The process
 * itself (spawn, capture, timeout, killing it whole) is exec-process.ts. Here: the working directory (the workspace,
 * or a loaded Skill's directory), the result the model and the client get, and known secret values redacted from it.
 */
import { realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { redactSecrets } from '../../common/redact';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { type ExecSandbox, type SandboxedSpawn, UnconfinedSandbox } from '../sandbox/exec-sandbox';
import type { ReadOnlyBind } from '../sandbox/bwrap-args';
import { runShell, type ExecOptions } from './exec-process';
import { formatBytes, formatSeconds, requireString, toolError } from './tool-args';
import type { WorkspacePaths } from './workspace-paths';

/** Where a Skill's directory appears inside the sandbox. */
export const SKILL_MOUNT_ROOT = '/skills';

/** A Skill loaded in a chat whose directory exec may use (read-only in the sandbox). */
export interface ExecSkillMount {
  name: string;
  /** the Skill's directory on the host */
  dir: string;
}

/**
 * The port through which the Skills module tells exec which Skills are loaded in a chat (the agent module never
 * imports the Skills module).
 */
export interface ExecSkillMountSource {
  mounts(chatId: string): readonly ExecSkillMount[];
}

interface ResolvedCwd {
  /** the host working directory of the spawned process */
  hostCwd: string;
  /** sandboxed: the working directory inside (undefined: the workspace) */
  chdir?: string;
  /** what the result and the model are told */
  display?: string;
}

function realDirOrNull(p: string): string | null {
  try {
    const real = realpathSync(p);
    return statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

function within(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export const EXEC_MODEL_MAX_CHARS = 4096;

function truncateChars(text: string, max: number): { text: string; total: number; truncated: boolean } {
  if (text.length <= max) return { text, total: Array.from(text).length, truncated: false };
  const chars = Array.from(text);
  if (chars.length <= max) return { text, total: chars.length, truncated: false };
  return { text: chars.slice(0, max).join(''), total: chars.length, truncated: true };
}

export class ExecTool implements AgentTool {
  readonly name = 'exec';
  get description(): string {
    const base =
      'Run a shell command (/bin/sh -c) in the workspace directory and return its exit code and output ' +
      `(stdout then stderr, at most ${EXEC_MODEL_MAX_CHARS} characters). Stdin is closed; long-running commands are ` +
      'killed at the timeout.';
    const status = this.sandbox.status();
    if (!status.active) return base;
    return (
      `${base} It runs in a sandbox: the system is read-only, only the workspace is writable (/tmp is private and ` +
      `discarded), the rest of the machine is not visible${status.network ? '' : ', and there is no network access'}.`
    );
  }
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The shell command to run' },
      cwd: {
        type: 'string',
        description:
          'Working directory (default: the workspace): a workspace-relative path, or the base directory of a Skill ' +
          'loaded in this chat as skill_load reported it (e.g. /skills/<name> or a directory below it; read-only)',
      },
    },
    required: ['command'],
  };
  readonly readOnly = false;

  private readonly sandbox: ExecSandbox;
  private skillMounts: ExecSkillMountSource | null = null;

  constructor(
    private readonly workspace: WorkspacePaths,
    private readonly options: ExecOptions,
  ) {
    this.sandbox = options.sandbox ?? new UnconfinedSandbox();
  }

  /** Registered by the Skills module: the Skills loaded in a chat, visible to exec. */
  setSkillMountSource(source: ExecSkillMountSource | null): void {
    this.skillMounts = source;
  }

  /** The directory the model uses for a Skill's files: `/skills/<name>` in the sandbox, its host path without it. */
  skillBaseDirectory(name: string, hostDir: string): string {
    return this.sandbox.status().active ? `${SKILL_MOUNT_ROOT}/${name}` : hostDir;
  }

  private mountsOf(chatId: string): Array<ExecSkillMount & { real: string }> {
    const mounts: Array<ExecSkillMount & { real: string }> = [];
    for (const mount of this.skillMounts?.mounts(chatId) ?? []) {
      const real = realDirOrNull(mount.dir);
      if (real !== null) mounts.push({ ...mount, real });
    }
    return mounts;
  }

  private async resolveCwd(raw: unknown, mounts: ReadonlyArray<ExecSkillMount & { real: string }>): Promise<ResolvedCwd | string> {
    if (raw === undefined || raw === null || raw === '' || raw === '.') return { hostCwd: this.workspace.root };
    if (typeof raw !== 'string') return 'cwd must be a string';
    if (raw.includes('\0')) return 'cwd contains a NUL byte';
    const sandboxed = this.sandbox.status().active;
    const skillHint = 'a Skill\'s base directory is only available while that Skill is loaded in this chat (skill_load)';
    if (raw === SKILL_MOUNT_ROOT || raw.startsWith(`${SKILL_MOUNT_ROOT}/`)) {
      const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
      const name = parts[1];
      if (name === undefined) return `cwd ${raw} is not a Skill's base directory (/skills/<name>)`;
      if (parts.includes('..')) return `cwd ${raw} must not contain ..`;
      const mount = mounts.find((m) => m.name === name);
      if (!mount) return `cwd ${raw}: the Skill ${name} is not loaded in this chat; ${skillHint}`;
      const sub = parts.slice(2);
      const host = realDirOrNull(path.join(mount.real, ...sub));
      if (host === null || !within(mount.real, host)) return `cwd ${raw} is not a directory of the Skill ${name}`;
      if (!sandboxed) return { hostCwd: host, display: host };
      const inside = path.posix.join(SKILL_MOUNT_ROOT, name, ...path.relative(mount.real, host).split(path.sep).filter(Boolean));
      return { hostCwd: this.workspace.root, chdir: inside, display: inside };
    }
    // without the sandbox the model is told the Skill's host path
    if (!sandboxed && path.isAbsolute(raw)) {
      const real = realDirOrNull(raw);
      const mount = real === null ? undefined : mounts.find((m) => within(m.real, real));
      if (real !== null && mount) return { hostCwd: real, display: real };
    }
    let resolved: string;
    try {
      resolved = (await this.workspace.resolve(raw)).absolute;
    } catch (error) {
      return `cwd ${raw} is neither in the workspace nor the base directory of a Skill loaded in this chat (${error instanceof Error ? error.message : String(error)}); ${skillHint}`;
    }
    if (realDirOrNull(resolved) === null) return `cwd ${raw} is not a directory in the workspace`;
    return { hostCwd: resolved, chdir: sandboxed ? resolved : undefined, display: this.workspace.relative(resolved) || '.' };
  }

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const command = requireString(args, 'command');
    if (command.trim() === '') return toolError('command must not be empty');
    if (command.includes('\0')) return toolError('command contains a NUL byte');
    ctx.signal.throwIfAborted();
    const mounts = this.mountsOf(ctx.chatId);
    const cwd = await this.resolveCwd(args['cwd'], mounts);
    if (typeof cwd === 'string') return toolError(cwd);
    const sandboxed = this.sandbox.status().active;
    const readOnlyBinds: ReadOnlyBind[] = sandboxed ? mounts.map((m) => ({ source: m.real, target: `${SKILL_MOUNT_ROOT}/${m.name}` })) : [];
    let spec: SandboxedSpawn;
    try {
      spec = this.sandbox.wrap(command, {
        cwd: sandboxed ? this.workspace.root : cwd.hostCwd,
        env: sandboxed ? this.options.env : { ...this.options.env, PWD: cwd.hostCwd },
        readOnlyBinds,
        chdir: cwd.chdir,
      });
    } catch (error) {
      return toolError(`could not start the command in the sandbox (${error instanceof Error ? error.message : String(error)}): ${command}`);
    }
    const outcome = await runShell(spec, this.options, ctx.signal);
    if (outcome.spawnError) return toolError(`could not start the command (${outcome.spawnError}): ${command}`);

    const decoder = new TextDecoder('utf-8', { fatal: false });
    const out = decoder.decode(outcome.stdout);
    const err = decoder.decode(outcome.stderr);
    // unconfined, exec can read anything the server can; even sandboxed a secret may be in the workspace: known
    // secret values (model keys, MCP headers, the API token) and secret-looking pairs are redacted before anything
    // reaches the model, the client or history
    const joined = redactSecrets(out && err && !out.endsWith('\n') ? `${out}\n${err}` : out + err);
    const { text, total, truncated } = truncateChars(joined, EXEC_MODEL_MAX_CHARS);

    let exit: string;
    if (outcome.code !== null) exit = String(outcome.code);
    else if (outcome.signal !== null) exit = `none (killed by ${outcome.signal})`;
    else exit = 'none';
    let body = joined === '' ? '(no output)' : text;
    if (truncated) {
      const more = outcome.ending === 'capped' ? 'at least ' : '';
      body += `\n\n[Output truncated: ${more}${total} characters in total]`;
    }
    switch (outcome.ending) {
      case 'timeout':
        body += `\n\n[Command timed out after ${formatSeconds(this.options.timeoutMs)}; its process group was killed and the output above is partial]`;
        break;
      case 'capped':
        body += `\n\n[Output exceeded ${formatBytes(this.options.maxCaptureBytes)}; the command was stopped and the output above is partial]`;
        break;
      case 'cancelled':
        body += '\n\n[Cancelled; the command was killed and the output above is partial]';
        break;
      case 'exited':
        break;
    }
    const where = cwd.display === undefined ? '' : `Working directory: ${cwd.display}\n`;
    const result = `${where}$ ${command}\nExit code: ${exit}\n\n${body}`;
    return outcome.ending === 'timeout' || outcome.ending === 'cancelled' ? { model: result, ok: false } : result;
  }
}
