import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { buildBwrapArgs, type BwrapArgsInput, SandboxArgsError } from './bwrap-args';

/** The position of the first `flag a b` triple (or `flag a` pair) in args, -1 when absent. */
function indexOfMount(args: string[], ...words: string[]): number {
  for (let i = 0; i + words.length <= args.length; i++) {
    if (words.every((word, j) => args[i + j] === word)) return i;
  }
  return -1;
}

describe('buildBwrapArgs', () => {
  let base: string;
  let system: string;
  let workspace: string;
  const input = (overrides: Partial<BwrapArgsInput> = {}): BwrapArgsInput => ({
    workspace,
    network: true,
    protectedPaths: [],
    env: { PATH: '/usr/bin:/bin', HOME: workspace },
    dropCapabilities: false,
    systemDirs: [system],
    systemSecrets: [],
    ...overrides,
  });

  beforeEach(() => {
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cc-bwrap-args-')));
    system = path.join(base, 'sys');
    workspace = path.join(base, 'ws');
    mkdirSync(system);
    mkdirSync(workspace);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: the command gets new PID, IPC and UTS namespaces, a fresh /proc, a minimal /dev and a private /tmp', () => {
    const args = buildBwrapArgs(input());
    expect(args.slice(0, 5)).toEqual(['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts']);
    expect(indexOfMount(args, '--proc', '/proc')).toBeGreaterThan(-1);
    expect(indexOfMount(args, '--ro-bind-try', '/proc/sys', '/proc/sys')).toBeGreaterThan(indexOfMount(args, '--proc', '/proc'));
    expect(indexOfMount(args, '--dev', '/dev')).toBeGreaterThan(-1);
    expect(indexOfMount(args, '--tmpfs', '/tmp')).toBeGreaterThan(-1);
    expect(indexOfMount(args, '--info-fd', '3')).toBeGreaterThan(-1);
    expect(args).not.toContain('--unshare-net');
    expect(args).not.toContain('--cap-drop');
  });

  it('Scenario: the system directories are an allowlist bound read-only; the workspace is the only writable bind and the cwd', () => {
    const args = buildBwrapArgs(input({ systemDirs: [system, path.join(base, 'missing')] }));
    expect(indexOfMount(args, '--ro-bind', system, system)).toBeGreaterThan(-1);
    expect(args).not.toContain(path.join(base, 'missing'));
    expect(indexOfMount(args, '--bind', workspace, workspace)).toBeGreaterThan(-1);
    expect(args.filter((arg) => arg === '--bind')).toHaveLength(1);
    expect(indexOfMount(args, '--ro-bind', '/', '/')).toBe(-1);
    expect(indexOfMount(args, '--chdir', workspace)).toBeGreaterThan(-1);
  });

  it('Scenario: a symlinked system directory (merged /usr) is recreated as the same symlink', () => {
    const link = path.join(base, 'bin');
    symlinkSync('sys', link);
    const args = buildBwrapArgs(input({ systemDirs: [system, link] }));
    expect(indexOfMount(args, '--symlink', 'sys', link)).toBeGreaterThan(-1);
  });

  it('Scenario: the environment is cleared and set from the allowlisted one only', () => {
    const args = buildBwrapArgs(input({ env: { PATH: '/usr/bin', LANG: 'C.UTF-8' } }));
    const clear = args.indexOf('--clearenv');
    expect(clear).toBeGreaterThan(-1);
    expect(args.slice(clear + 1)).toEqual(['--setenv', 'PATH', '/usr/bin', '--setenv', 'LANG', 'C.UTF-8']);
  });

  it('Scenario: CASHCODE_EXEC_NETWORK=off unshares the network; as root every capability is dropped', () => {
    const args = buildBwrapArgs(input({ network: false, dropCapabilities: true }));
    expect(args).toContain('--unshare-net');
    expect(indexOfMount(args, '--cap-drop', 'ALL')).toBeGreaterThan(-1);
  });

  it('Scenario: a protected directory under a system directory is covered by an empty tmpfs, a protected file by /dev/null', () => {
    const data = path.join(system, 'cashcode-data');
    const envFile = path.join(system, 'app', '.env');
    mkdirSync(data);
    mkdirSync(path.dirname(envFile));
    writeFileSync(envFile, 'KEY=secret\n');
    const args = buildBwrapArgs(input({ protectedPaths: [data, envFile, path.join(base, 'not-there')] }));
    const bind = indexOfMount(args, '--ro-bind', system, system);
    expect(indexOfMount(args, '--tmpfs', data)).toBeGreaterThan(bind);
    expect(indexOfMount(args, '--ro-bind', '/dev/null', envFile)).toBeGreaterThan(bind);
    expect(args).not.toContain(path.join(base, 'not-there'));
  });

  it('Scenario: a protected directory that contains the workspace is hidden before the workspace is bound into it', () => {
    const data = path.join(system, 'data');
    const inner = path.join(data, 'workspace');
    mkdirSync(inner, { recursive: true });
    const args = buildBwrapArgs(input({ workspace: inner, protectedPaths: [data] }));
    expect(indexOfMount(args, '--tmpfs', data)).toBeGreaterThan(-1);
    expect(indexOfMount(args, '--tmpfs', data)).toBeLessThan(indexOfMount(args, '--bind', inner, inner));
  });

  it('Scenario: a protected directory outside every bound directory (e.g. under /tmp) needs no mount', () => {
    const data = path.join(base, 'data');
    mkdirSync(data);
    const args = buildBwrapArgs(input({ protectedPaths: [data] }));
    expect(args).not.toContain(data);
  });

  it('Scenario: protected paths inside the workspace are covered after the workspace is bound', () => {
    const data = path.join(workspace, 'cashcode-data');
    const envFile = path.join(workspace, '.env');
    mkdirSync(data);
    writeFileSync(envFile, 'KEY=secret\n');
    const args = buildBwrapArgs(input({ protectedPaths: [data, envFile] }));
    const bind = indexOfMount(args, '--bind', workspace, workspace);
    expect(indexOfMount(args, '--tmpfs', data)).toBeGreaterThan(bind);
    expect(indexOfMount(args, '--ro-bind', '/dev/null', envFile)).toBeGreaterThan(bind);
  });

  it('Scenario: an extra read-only bind (a Skill directory) comes after the masks; one that would expose a protected path is refused', () => {
    const data = path.join(system, 'data');
    const skill = path.join(data, 'skills', 'user', 'pdf');
    mkdirSync(skill, { recursive: true });
    const args = buildBwrapArgs(input({ protectedPaths: [data], readOnlyBinds: [skill] }));
    expect(indexOfMount(args, '--ro-bind', skill, skill)).toBeGreaterThan(indexOfMount(args, '--tmpfs', data));
    expect(() => buildBwrapArgs(input({ protectedPaths: [data], readOnlyBinds: [system] }))).toThrow(
      new SandboxArgsError(`the read-only bind ${system} would expose ${data}`),
    );
    expect(() => buildBwrapArgs(input({ readOnlyBinds: [path.join(base, 'nope')] }))).toThrow(SandboxArgsError);
  });

  it('Scenario: a Skill directory is bound read-only at /skills/<name>, after the mask that hides the data dir, and may be the cwd', () => {
    const data = path.join(system, 'data');
    const skill = path.join(data, 'skills', 'user', 'pdf');
    mkdirSync(path.join(skill, 'scripts'), { recursive: true });
    const args = buildBwrapArgs(
      input({ protectedPaths: [data], readOnlyBinds: [{ source: skill, target: '/skills/pdf' }], chdir: '/skills/pdf/scripts' }),
    );
    const bind = indexOfMount(args, '--ro-bind', skill, '/skills/pdf');
    expect(bind).toBeGreaterThan(indexOfMount(args, '--tmpfs', data));
    expect(indexOfMount(args, '--chdir', '/skills/pdf/scripts')).toBeGreaterThan(bind);
    expect(args.filter((arg) => arg === '--chdir')).toHaveLength(1);
    // the default cwd stays the workspace
    const plain = buildBwrapArgs(input({ protectedPaths: [data], readOnlyBinds: [{ source: skill, target: '/skills/pdf' }] }));
    expect(indexOfMount(plain, '--chdir', workspace)).toBeGreaterThan(-1);
  });

  it('Scenario: a cwd outside the workspace and every read-only bind target, or a bind target over a system path, is refused', () => {
    const skill = path.join(base, 'pdf');
    mkdirSync(skill);
    const binds = [{ source: skill, target: '/skills/pdf' }];
    expect(() => buildBwrapArgs(input({ readOnlyBinds: binds, chdir: '/skills/other' }))).toThrow(
      new SandboxArgsError('the working directory /skills/other is neither in the workspace nor inside a read-only bind'),
    );
    expect(() => buildBwrapArgs(input({ chdir: skill }))).toThrow(SandboxArgsError);
    for (const target of ['/', '/tmp/x', '/proc', system, 'skills/pdf', '/skills/../etc', workspace]) {
      expect(() => buildBwrapArgs(input({ readOnlyBinds: [{ source: skill, target }] }))).toThrow(SandboxArgsError);
    }
  });

  it('Scenario: a missing workspace is refused with a clear error', () => {
    expect(() => buildBwrapArgs(input({ workspace: path.join(base, 'gone') }))).toThrow(
      new SandboxArgsError(`the workspace ${path.join(base, 'gone')} is not a directory`),
    );
  });

  it('Scenario: host secrets under /etc are covered when they exist', () => {
    const etc = path.join(base, 'etc');
    mkdirSync(path.join(etc, 'sudoers.d'), { recursive: true });
    writeFileSync(path.join(etc, 'shadow'), 'root:x:1::::::\n');
    const args = buildBwrapArgs(
      input({ systemDirs: [etc], systemSecrets: [path.join(etc, 'shadow'), path.join(etc, 'sudoers.d'), path.join(etc, 'gshadow')] }),
    );
    expect(indexOfMount(args, '--ro-bind', '/dev/null', path.join(etc, 'shadow'))).toBeGreaterThan(-1);
    expect(indexOfMount(args, '--tmpfs', path.join(etc, 'sudoers.d'))).toBeGreaterThan(-1);
    expect(args).not.toContain(path.join(etc, 'gshadow'));
  });
});
