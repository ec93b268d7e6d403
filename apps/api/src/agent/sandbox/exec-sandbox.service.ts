import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { ExecSandboxStatus } from '@cashcode/contracts';
import { formatEvent } from '../../common/log-format';
import { APP_CONFIG, type AppConfig, ConfigError } from '../../config/app-config';
import { buildExecEnvironment, DEFAULT_EXEC_PATH } from '../tools/exec-process';
import {
  BubblewrapSandbox,
  type ExecSandbox,
  findExecutable,
  probeSandbox,
  type SandboxedSpawn,
  type SandboxWrapOptions,
  UnconfinedSandbox,
} from './exec-sandbox';

/** Host paths no sandboxed command may see: the server's state, logs and settings (with the LLM keys), its .env. */
export function protectedPathsOf(config: AppConfig): string[] {
  return [config.dataDir, config.memoryDir, config.logDir, config.configDir, path.join(config.rootDir, '.env')];
}

/** The one line the start-up log says about exec confinement. */
export function describeSandbox(status: ExecSandboxStatus): string {
  return status.active
    ? `exec sandbox: bubblewrap (network ${status.network ? 'on' : 'off'})`
    : `exec runs UNCONFINED: ${status.reason ?? 'no sandbox'}`;
}

/**
 * Chooses the sandbox for CASHCODE_EXEC_SANDBOX: `off` → unconfined; `auto` → bubblewrap when it is installed and a
 * probe run (the real argument set, `exit 0`) works, else unconfined with the reason; `bwrap` → bubblewrap or a
 * ConfigError, so the server refuses to start.
 */
export async function resolveExecSandbox(config: AppConfig): Promise<ExecSandbox> {
  const mode = config.execSandbox;
  const unconfined = (reason: string) => {
    const network = config.execNetwork ? '' : '; CASHCODE_EXEC_NETWORK=off cannot be applied without the sandbox';
    return new UnconfinedSandbox({ mode, active: false, kind: null, network: true, reason: reason + network });
  };
  if (mode === 'off') return unconfined('CASHCODE_EXEC_SANDBOX=off');
  const required = (reason: string) =>
    new ConfigError(`CASHCODE_EXEC_SANDBOX=bwrap, but ${reason}: install bubblewrap or set CASHCODE_EXEC_SANDBOX=auto or off`);

  // the server's PATH, else the standard system directories
  const bwrapPath = findExecutable('bwrap', config.skillBinPath || DEFAULT_EXEC_PATH);
  if (bwrapPath === null) {
    const reason = 'bubblewrap (bwrap) is not installed (not found on PATH)';
    if (mode === 'bwrap') throw required(reason);
    return unconfined(reason);
  }
  const sandbox = new BubblewrapSandbox({ bwrapPath, mode, network: config.execNetwork, protectedPaths: protectedPathsOf(config) });
  let workspace: string;
  try {
    workspace = realpathSync(config.workspaceDir);
  } catch {
    workspace = config.workspaceDir;
  }
  const probe = await probeSandbox(sandbox, { cwd: workspace, env: buildExecEnvironment(config.execEnv, workspace) });
  if (!probe.ok) {
    const reason = `bubblewrap does not work here: ${probe.reason ?? 'the probe run failed'}`;
    if (mode === 'bwrap') throw required(reason);
    return unconfined(reason);
  }
  return sandbox;
}

/**
 * The server's exec sandbox, decided once at start (onModuleInit) and cached. Commands are wrapped through it;
 * `status()` is what `GET /api/health` (`exec_sandbox`) and `GET /api/settings/exec-sandbox` report.
 */
@Injectable()
export class ExecSandboxService implements ExecSandbox, OnModuleInit {
  private readonly logger = new Logger('ExecSandbox');
  private current: ExecSandbox | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    if (this.current !== null) return;
    this.current = await resolveExecSandbox(this.config);
    const status = this.current.status();
    this.logger.log(
      `${formatEvent('exec.sandbox', {
        mode: status.mode,
        active: status.active,
        kind: status.kind,
        network: status.network,
      })} — ${describeSandbox(status)}`,
    );
  }

  status(): ExecSandboxStatus {
    if (this.current === null) {
      return { mode: this.config.execSandbox, active: false, kind: null, network: true, reason: 'the sandbox has not been probed yet' };
    }
    return this.current.status();
  }

  wrap(command: string, options: SandboxWrapOptions): SandboxedSpawn {
    if (this.current === null) throw new Error('the exec sandbox is not ready yet (the server is still starting)');
    return this.current.wrap(command, options);
  }
}
