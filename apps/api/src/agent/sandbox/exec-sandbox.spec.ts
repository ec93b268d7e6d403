/**
 * The sandbox with the real bwrap and real processes: the exec tool's kill paths (timeout, SIGTERM ignored, cancel,
 * detached leftovers), the start-up decision per CASHCODE_EXEC_SANDBOX, and the probe.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BWRAP_PATH, describeWithBwrap, eventually, processesMatching, uniqueSleepSeconds } from '../../../test/support/bwrap';
import { ConfigError, loadConfig } from '../../config/app-config';
import type { ToolContext, ToolResult } from '../agent-tool';
import { buildExecEnvironment, type ExecOptions } from '../tools/exec-process';
import { ExecTool } from '../tools/exec.tool';
import { WorkspacePaths } from '../tools/workspace-paths';
import { BubblewrapSandbox, type ExecSandbox, probeSandbox, UnconfinedSandbox } from './exec-sandbox';
import { describeSandbox, resolveExecSandbox } from './exec-sandbox.service';

const ctx = (signal = new AbortController().signal): ToolContext => ({ chatId: 'c1', turnId: 't1', signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

describeWithBwrap('exec in the bubblewrap sandbox (real bwrap)', () => {
  let base: string;
  let workspace: WorkspacePaths;
  let data: string;
  let sandbox: ExecSandbox;
  const make = (overrides: Partial<ExecOptions> = {}, box: ExecSandbox = sandbox) =>
    new ExecTool(workspace, {
      timeoutMs: 5000,
      killGraceMs: 500,
      maxCaptureBytes: 64 * 1024,
      env: buildExecEnvironment({}, workspace.root),
      sandbox: box,
      ...overrides,
    });

  beforeEach(() => {
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cc-sandbox-')));
    data = path.join(base, 'data');
    mkdirSync(path.join(data, 'workspace'), { recursive: true });
    mkdirSync(path.join(data, 'memory'));
    workspace = new WorkspacePaths(path.join(data, 'workspace'), []);
    sandbox = new BubblewrapSandbox({ bwrapPath: BWRAP_PATH as string, mode: 'auto', network: true, protectedPaths: [data] });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: a sandboxed command writes in the workspace and reads the system (positive control)', async () => {
    const out = await make().execute({ command: 'pwd; echo hello > made.txt; test -x /usr/bin/env && echo usr-ok; ls ..' }, ctx());
    expect(out).toBe(`$ pwd; echo hello > made.txt; test -x /usr/bin/env && echo usr-ok; ls ..\nExit code: 0\n\n${workspace.root}\nusr-ok\nworkspace\n`);
    expect(readFileSync(path.join(workspace.root, 'made.txt'), 'utf8')).toBe('hello\n');
  });

  it('Scenario: the tool description tells the model it runs in a sandbox', () => {
    expect(make().description).toContain('It runs in a sandbox');
    expect(make({}, new UnconfinedSandbox()).description).not.toContain('sandbox');
  });

  it('Scenario: a timeout kills everything started inside: setsid, double fork, nohup and background jobs', async () => {
    const n = uniqueSleepSeconds();
    const command =
      `(setsid sleep ${n} >/dev/null 2>&1 &); (sh -c 'nohup sleep ${n + 1} >/dev/null 2>&1 &' &); ` +
      `sleep ${n + 2} & echo started; sleep ${n + 3}`;
    const tool = make({ timeoutMs: 1500, killGraceMs: 300 });
    const running = tool.execute({ command }, ctx());
    // the processes really run on the host while the command waits (so the test cannot pass vacuously)
    expect(await eventually(() => [0, 1, 2, 3].every((k) => processesMatching(`sleep ${n + k}`, true).length > 0))).toBe(true);
    const out = text(await running);
    expect(out).toContain('started');
    expect(out).toContain('[Command timed out after 1.5s');
    for (const k of [0, 1, 2, 3]) expect(processesMatching(`sleep ${n + k}`)).toEqual([]);
  });

  it('Scenario: a sandboxed command ignoring SIGTERM is killed with SIGKILL after the grace period', async () => {
    const n = uniqueSleepSeconds();
    const tool = make({ timeoutMs: 300, killGraceMs: 300 });
    const started = Date.now();
    const out = text(await tool.execute({ command: `trap '' TERM; sleep ${n} & while :; do sleep 1; done` }, ctx()));
    expect(out).toContain('timed out after 0.3s');
    expect(Date.now() - started).toBeLessThan(4000);
    expect(processesMatching(`sleep ${n}`)).toEqual([]);
  });

  it('Scenario: cancelling the turn kills the whole sandbox', async () => {
    const n = uniqueSleepSeconds();
    const controller = new AbortController();
    const running = make({ killGraceMs: 300 }).execute({ command: `(setsid sleep ${n} &); sleep ${n + 1}` }, ctx(controller.signal));
    expect(await eventually(() => processesMatching(`sleep ${n}`, true).length > 0 && processesMatching(`sleep ${n + 1}`, true).length > 0)).toBe(true);
    controller.abort();
    expect(text(await running)).toContain('[Cancelled; the command was killed');
    expect(processesMatching(`sleep ${n}`)).toEqual([]);
    expect(processesMatching(`sleep ${n + 1}`)).toEqual([]);
  });

  it('Scenario: a detached process left behind when the command exits is killed with the sandbox (unconfined control keeps it)', async () => {
    const n = uniqueSleepSeconds();
    // the pause gives setsid time to leave the command's process group before the command ends (else the group kill
    // at exit can catch it first on a loaded machine, and the control would fail for the wrong reason)
    const command = `(setsid sleep ${n} >/dev/null 2>&1 &); sleep 1; echo left`;
    // control: unconfined, setsid really escapes the process group and survives
    const unconfined = text(await make({}, new UnconfinedSandbox()).execute({ command }, ctx()));
    expect(unconfined).toContain('left');
    try {
      expect(await eventually(() => processesMatching(`sleep ${n}`, true).length > 0, 2000)).toBe(true);
    } finally {
      killAll(processesMatching(`sleep ${n}`));
    }
    const m = n + 7;
    const sandboxed = text(await make().execute({ command: command.replace(String(n), String(m)) }, ctx()));
    expect(sandboxed).toMatch(/Exit code: 0\n\nleft\n$/);
    expect(processesMatching(`sleep ${m}`)).toEqual([]);
  });

  it('Scenario: CASHCODE_EXEC_NETWORK=off leaves only an isolated loopback (network on sees the host interfaces)', async () => {
    const command = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '";
    const interfaces = (out: string) => out.split('\n\n')[1]?.trim().split(' ');
    const off = new BubblewrapSandbox({ bwrapPath: BWRAP_PATH as string, mode: 'auto', network: false, protectedPaths: [data] });
    expect(interfaces(text(await make({}, off).execute({ command }, ctx())))).toEqual(['lo']);
    expect(interfaces(text(await make().execute({ command }, ctx()))).filter((name) => name !== 'lo').length).toBeGreaterThan(0);
    expect(off.status()).toEqual({ mode: 'auto', active: true, kind: 'bwrap', network: false });
  });

  it('Scenario: the probe runs the real argument set and reports why bwrap does not work', async () => {
    const options = { cwd: workspace.root, env: buildExecEnvironment({}, workspace.root) };
    expect(await probeSandbox(sandbox, options)).toEqual({ ok: true });
    const broken = new BubblewrapSandbox({ bwrapPath: '/bin/false', mode: 'auto', network: true, protectedPaths: [] });
    expect(await probeSandbox(broken, options)).toEqual({ ok: false, reason: 'the probe run failed (exit code 1)' });
    const missing = new BubblewrapSandbox({ bwrapPath: path.join(base, 'no-bwrap'), mode: 'auto', network: true, protectedPaths: [] });
    expect((await probeSandbox(missing, options)).reason).toMatch(/could not be started \(ENOENT\)/);
    expect(await probeSandbox(sandbox, { ...options, cwd: path.join(base, 'gone') })).toEqual({
      ok: false,
      reason: `the workspace ${path.join(base, 'gone')} is not a directory`,
    });
  });

  describe('the start-up decision (CASHCODE_EXEC_SANDBOX)', () => {
    const configWith = (env: Record<string, string>) =>
      loadConfig({ CASHCODE_DATA_DIR: data, CASHCODE_CONFIG_DIR: path.join(base, 'config'), ...env }, base);

    it('Scenario: auto with a working bwrap confines exec', async () => {
      const status = (await resolveExecSandbox(configWith({}))).status();
      expect(status).toEqual({ mode: 'auto', active: true, kind: 'bwrap', network: true });
      expect(describeSandbox(status)).toBe('exec sandbox: bubblewrap (network on)');
      const off = (await resolveExecSandbox(configWith({ CASHCODE_EXEC_NETWORK: 'off' }))).status();
      expect(describeSandbox(off)).toBe('exec sandbox: bubblewrap (network off)');
    });

    it('Scenario: auto without bwrap runs exec unconfined and says why', async () => {
      const status = (await resolveExecSandbox(configWith({ PATH: path.join(base, 'empty-bin') }))).status();
      expect(status).toEqual({
        mode: 'auto',
        active: false,
        kind: null,
        network: true,
        reason: 'bubblewrap (bwrap) is not installed (not found on PATH)',
      });
      expect(describeSandbox(status)).toBe('exec runs UNCONFINED: bubblewrap (bwrap) is not installed (not found on PATH)');
    });

    it('Scenario: bwrap required but missing refuses to start with a clear message', async () => {
      await expect(resolveExecSandbox(configWith({ CASHCODE_EXEC_SANDBOX: 'bwrap', PATH: path.join(base, 'empty-bin') }))).rejects.toThrow(
        new ConfigError(
          'CASHCODE_EXEC_SANDBOX=bwrap, but bubblewrap (bwrap) is not installed (not found on PATH): install bubblewrap or set ' +
            'CASHCODE_EXEC_SANDBOX=auto or off',
        ),
      );
      const required = await resolveExecSandbox(configWith({ CASHCODE_EXEC_SANDBOX: 'bwrap' }));
      expect(required.status()).toMatchObject({ mode: 'bwrap', active: true });
    });

    it('Scenario: off runs exec unconfined', async () => {
      const status = (await resolveExecSandbox(configWith({ CASHCODE_EXEC_SANDBOX: 'off', CASHCODE_EXEC_NETWORK: 'off' }))).status();
      expect(status).toEqual({
        mode: 'off',
        active: false,
        kind: null,
        network: true,
        reason: 'CASHCODE_EXEC_SANDBOX=off; CASHCODE_EXEC_NETWORK=off cannot be applied without the sandbox',
      });
    });
  });
});

describe('exec sandbox configuration', () => {
  it('Scenario: CASHCODE_EXEC_SANDBOX and CASHCODE_EXEC_NETWORK are validated at boot', () => {
    expect(loadConfig({}, '/tmp')).toMatchObject({ execSandbox: 'auto', execNetwork: true });
    expect(loadConfig({ CASHCODE_EXEC_SANDBOX: ' BWRAP ', CASHCODE_EXEC_NETWORK: 'off' }, '/tmp')).toMatchObject({
      execSandbox: 'bwrap',
      execNetwork: false,
    });
    expect(() => loadConfig({ CASHCODE_EXEC_SANDBOX: 'docker' }, '/tmp')).toThrow(
      new ConfigError('CASHCODE_EXEC_SANDBOX must be one of auto, bwrap, off, got "docker"'),
    );
    expect(() => loadConfig({ CASHCODE_EXEC_NETWORK: 'maybe' }, '/tmp')).toThrow(
      new ConfigError('CASHCODE_EXEC_NETWORK must be true or false, got "maybe"'),
    );
  });
});
