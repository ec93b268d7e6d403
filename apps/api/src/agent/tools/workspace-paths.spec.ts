import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isWithin, WorkspacePathError, WorkspacePaths } from './workspace-paths';

describe(WorkspacePaths.name, () => {
  let base: string;
  let ws: WorkspacePaths;

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-wsp-'));
    mkdirSync(path.join(base, 'ws', 'sub'), { recursive: true });
    mkdirSync(path.join(base, 'ws_evil'));
    mkdirSync(path.join(base, 'outside'));
    mkdirSync(path.join(base, 'skills', 'user'), { recursive: true });
    writeFileSync(path.join(base, 'outside', 'secret.txt'), 'secret');
    writeFileSync(path.join(base, 'ws_evil', 'x.txt'), 'evil');
    writeFileSync(path.join(base, 'ws', 'sub', 'in.txt'), 'inside');
    symlinkSync(path.join(base, 'outside', 'secret.txt'), path.join(base, 'ws', 'file-link'));
    symlinkSync(path.join(base, 'outside'), path.join(base, 'ws', 'dir-link'));
    symlinkSync(path.join(base, 'ws', 'sub'), path.join(base, 'ws', 'inner-link'));
    symlinkSync(path.join(base, 'nowhere'), path.join(base, 'ws', 'dangling'));
    ws = new WorkspacePaths(path.join(base, 'ws'), [path.join(base, 'skills')]);
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: the workspace directory is created at start', () => {
    const fresh = path.join(base, 'new', 'workspace');
    const created = new WorkspacePaths(fresh, []);
    expect(created.root).toBe(realpathSync(fresh));
  });

  it('Scenario: relative paths inside the workspace resolve', async () => {
    const resolved = await ws.resolve('sub/in.txt');
    expect(resolved.absolute).toBe(realpathSync(path.join(base, 'ws', 'sub', 'in.txt')));
    expect(resolved.relative).toBe('sub/in.txt');
    expect(resolved.display).toBe('sub/in.txt');
    expect((await ws.resolve('sub/../sub/new/file.txt')).relative).toBe('sub/new/file.txt');
    expect((await ws.resolve('')).relative).toBe('');
  });

  it('Scenario: an absolute path inside the workspace is accepted', async () => {
    expect((await ws.resolve(path.join(base, 'ws', 'sub', 'in.txt'))).relative).toBe('sub/in.txt');
  });

  it.each([
    ['../outside/secret.txt'],
    ['sub/../../outside/secret.txt'],
    ['..'],
    ['/etc/passwd'],
    ['../ws_evil/x.txt'],
    ['file-link'],
    ['dir-link/secret.txt'],
    ['dir-link'],
    ['dir-link/new-file.txt'],
  ])('Scenario: traversal %s is refused without revealing host paths', async (input) => {
    const error = await ws.resolve(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspacePathError);
    const message = (error as Error).message;
    expect(message).toBe(`path '${input}' is outside the workspace; access denied`);
    expect(message).not.toContain(base);
  });

  it('Scenario: the sibling-prefix directory is refused by an absolute path', async () => {
    const sibling = path.join(base, 'ws_evil', 'x.txt');
    await expect(ws.resolve(sibling)).rejects.toThrow('outside the workspace');
    expect(isWithin(path.join(base, 'ws'), sibling)).toBe(false);
  });

  it('Scenario: a NUL byte is refused', async () => {
    await expect(ws.resolve('sub/in.txt\0.png')).rejects.toThrow('NUL byte');
  });

  it('Scenario: a dangling symbolic link is refused', async () => {
    await expect(ws.resolve('dangling')).rejects.toThrow('symbolic link that cannot be resolved');
  });

  it('Scenario: a link that stays inside the workspace is followed', async () => {
    expect((await ws.resolve('inner-link/in.txt')).relative).toBe('sub/in.txt');
  });

  it('Scenario: skill roots are refused for writes wherever the workspace points', async () => {
    const overData = new WorkspacePaths(base, [path.join(base, 'skills')]);
    await expect(overData.resolveForWrite('skills/user/demo/SKILL.md')).rejects.toThrow('agent_skill_manage');
    await expect(overData.resolveForWrite('ws/sub/in.txt')).resolves.toMatchObject({ relative: 'ws/sub/in.txt' });
    await expect(overData.resolve('skills/user/demo/SKILL.md')).resolves.toMatchObject({
      relative: 'skills/user/demo/SKILL.md',
    });
  });

  it('Scenario: a link inside the workspace that points into a skill root is refused for writes', async () => {
    const inSkills = new WorkspacePaths(base, [path.join(base, 'skills')]);
    symlinkSync(path.join(base, 'skills', 'user'), path.join(base, 'to-skills'));
    await expect(inSkills.resolveForWrite('to-skills/x/SKILL.md')).rejects.toThrow('protected Skill directory');
  });
});
