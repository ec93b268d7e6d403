import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { registerSecretValue, unregisterSecretValue } from '../../common/redact';
import { loadConfig } from '../../config/app-config';
import type { ToolContext, ToolResult } from '../agent-tool';
import { buildExecEnvironment, type ExecOptions } from './exec-process';
import { ExecTool } from './exec.tool';
import { WorkspacePaths } from './workspace-paths';

const ctx = (signal = new AbortController().signal): ToolContext => ({ chatId: 'c1', turnId: 't1', signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

/** Processes of a group that are still running (zombies waiting for a reaper do not count). */
function liveMembers(pgid: number): number[] {
  if (!existsSync('/proc')) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') live.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return live;
}

function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return liveMembers(pgid).length === 0;
}

/**
 * Whether the group is gone, allowing the kernel a moment to finish a SIGKILL it already delivered (on a loaded machine a
 * killed process can still be listed for a few milliseconds); a group that keeps running still fails.
 */
async function groupGoneSoon(pgid: number): Promise<boolean> {
  const deadline = Date.now() + 2000;
  while (!groupGone(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return groupGone(pgid);
}

describe(ExecTool.name, () => {
  let base: string;
  let workspace: WorkspacePaths;
  const make = (overrides: Partial<ExecOptions> = {}) =>
    new ExecTool(workspace, {
      timeoutMs: 5000,
      killGraceMs: 500,
      maxCaptureBytes: 64 * 1024,
      env: buildExecEnvironment({ PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, workspace.root),
      ...overrides,
    });

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-exec-'));
    workspace = new WorkspacePaths(path.join(base, 'ws'), []);
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: a command runs in the workspace and reports its exit code and output', async () => {
    const out = await make().execute({ command: 'pwd; echo err >&2; exit 3' }, ctx());
    expect(out).toBe(`$ pwd; echo err >&2; exit 3\nExit code: 3\n\n${realpathSync(workspace.root)}\nerr\n`);
  });

  it('Scenario: no output says so', async () => {
    expect(await make().execute({ command: 'true' }, ctx())).toBe('$ true\nExit code: 0\n\n(no output)');
  });

  it('Scenario: stdin is closed so cat returns at once', async () => {
    const started = Date.now();
    expect(await make().execute({ command: 'cat' }, ctx())).toBe('$ cat\nExit code: 0\n\n(no output)');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('Scenario: the environment carries no secrets', async () => {
    const saved = { ...process.env };
    process.env['OPENAI_API_KEY'] = 'sk-test-should-not-leak';
    process.env['CASHCODE_API_TOKEN'] = 'token-should-not-leak-1234';
    process.env['MCP_SECRET_HEADER'] = 'mcp-should-not-leak';
    try {
      const config = loadConfig(process.env, base);
      const tool = new ExecTool(workspace, {
        timeoutMs: 5000,
        killGraceMs: 500,
        maxCaptureBytes: 64 * 1024,
        env: buildExecEnvironment(config.execEnv, workspace.root),
      });
      const out = text(await tool.execute({ command: 'env' }, ctx()));
      expect(out).not.toContain('should-not-leak');
      expect(out).toContain(`HOME=${workspace.root}`);
      expect(out).toMatch(/^PATH=/m);
      const names = out
        .split('\n\n')[1]
        ?.split('\n')
        .map((line) => line.split('=')[0])
        .filter((name) => name !== undefined && name !== '');
      const allowed = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TMPDIR', 'USER', 'LOGNAME', 'HOME', 'PWD', 'SHELL', 'TERM', 'SHLVL', 'OLDPWD', '_'];
      expect(names?.filter((name) => !allowed.includes(name as string))).toEqual([]);
    } finally {
      process.env = saved;
    }
  });

  it('Scenario: known secret values printed by a command are redacted', async () => {
    const secret = 'sk-live-0123456789abcdef';
    registerSecretValue(secret);
    try {
      const out = text(await make().execute({ command: `echo key=${secret.slice(0, 8)}""${secret.slice(8)}` }, ctx()));
      expect(out.split('\n\n')[1]).toBe('key=[redacted]\n');
      expect(out.split('\n\n')[1]).not.toContain('0123456789');
    } finally {
      unregisterSecretValue(secret);
    }
  });

  it('Scenario: a timeout kills the whole process group, grandchildren included, and keeps partial output', async () => {
    const tool = make({ timeoutMs: 400, killGraceMs: 300 });
    const out = await tool.execute({ command: 'echo $$; sleep 30 & sleep 30; echo never' }, ctx());
    const body = text(out);
    expect(typeof out === 'object' && out.ok).toBe(false);
    expect(body).toMatch(/^\$ echo \$\$; sleep 30 & sleep 30; echo never\nExit code: none \(killed by SIGTERM\)\n\n\d+\n/);
    expect(body).toContain('[Command timed out after 0.4s; its process group was killed and the output above is partial]');
    expect(body).not.toMatch(/^never$/m);
    const pgid = Number(/\n\n(\d+)\n/.exec(body)?.[1]);
    expect(pgid).toBeGreaterThan(1);
    expect(await groupGoneSoon(pgid)).toBe(true);
  });

  it('Scenario: a command ignoring SIGTERM is killed with SIGKILL after the grace period', async () => {
    const tool = make({ timeoutMs: 300, killGraceMs: 300 });
    const out = text(await tool.execute({ command: "trap '' TERM; echo $$; while :; do sleep 1; done" }, ctx()));
    expect(out).toContain('timed out after 0.3s');
    const pgid = Number(/\n\n(\d+)\n/.exec(out)?.[1]);
    expect(await groupGoneSoon(pgid)).toBe(true);
  });

  it('Scenario: background processes left by the command are terminated when it exits', async () => {
    const out = text(await make().execute({ command: 'echo $$; sleep 30 >/dev/null 2>&1 &' }, ctx()));
    const pgid = Number(/\n\n(\d+)\n/.exec(out)?.[1]);
    expect(out).toMatch(/Exit code: 0/);
    const deadline = Date.now() + 3000;
    while (!groupGone(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(groupGone(pgid)).toBe(true);
  });

  it('Scenario: endless output (yes) is capped and the command stopped', async () => {
    const started = Date.now();
    const out = text(await make({ maxCaptureBytes: 256 * 1024 }).execute({ command: 'yes' }, ctx()));
    expect(Date.now() - started).toBeLessThan(4000);
    const [head, ...rest] = out.split('\n\n');
    expect(head).toMatch(/^\$ yes\nExit code: none \(killed by SIGTERM\)$/);
    const body = rest.join('\n\n');
    expect(body.startsWith('y\ny\n')).toBe(true);
    expect(body).toContain('[Output truncated: at least 262144 characters in total]');
    expect(body).toContain('[Output exceeded 256 KiB; the command was stopped and the output above is partial]');
    expect(body.split('\n\n[')[0]).toHaveLength(4096);
  });

  it('Scenario: more than 4096 characters are truncated with the total', async () => {
    const out = text(await make().execute({ command: "head -c 5000 /dev/zero | tr '\\0' x" }, ctx()));
    expect(out).toContain(`\n\n${'x'.repeat(4096)}\n\n[Output truncated: 5000 characters in total]`);
  });

  it('Scenario: cancelling the turn kills the command', async () => {
    const controller = new AbortController();
    const pending = make({ timeoutMs: 30_000, killGraceMs: 300 }).execute({ command: 'echo $$; sleep 30' }, ctx(controller.signal));
    setTimeout(() => controller.abort(), 200);
    const out = text(await pending);
    expect(out).toContain('[Cancelled; the command was killed and the output above is partial]');
    const pgid = Number(/\n\n(\d+)\n/.exec(out)?.[1]);
    expect(await groupGoneSoon(pgid)).toBe(true);
  });
});
