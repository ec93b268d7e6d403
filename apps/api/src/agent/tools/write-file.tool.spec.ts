import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { WorkspacePaths } from './workspace-paths';
import { WriteFileTool } from './write-file.tool';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(WriteFileTool.name, () => {
  let base: string;
  let tool: WriteFileTool;

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-write-'));
    mkdirSync(path.join(base, 'ws'));
    mkdirSync(path.join(base, 'outside'));
    mkdirSync(path.join(base, 'data', 'skills', 'user'), { recursive: true });
    tool = new WriteFileTool(new WorkspacePaths(path.join(base, 'ws'), [path.join(base, 'data', 'skills')]));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: a new file is written with its parent directories', async () => {
    const out = await tool.execute({ path: 'a/b/c.txt', content: 'héllo 👋' }, ctx());
    expect(out).toBe('Wrote a/b/c.txt (7 characters)');
    expect(readFileSync(path.join(base, 'ws', 'a', 'b', 'c.txt'), 'utf8')).toBe('héllo 👋');
    expect(tool.readOnly).toBe(false);
  });

  it('Scenario: an existing file is overwritten atomically, keeping its mode and leaving no temp file', async () => {
    const target = path.join(base, 'ws', 'x.sh');
    writeFileSync(target, 'old', { mode: 0o755 });
    await tool.execute({ path: 'x.sh', content: 'new' }, ctx());
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(statSync(target).mode & 0o777).toBe(0o755);
    expect(readdirSync(path.join(base, 'ws'))).toEqual(['x.sh']);
  });

  it('Scenario: writing outside the workspace is refused', async () => {
    for (const target of ['../outside/x.txt', path.join(base, 'outside', 'x.txt'), 'a/../../outside/x.txt']) {
      expect(text(await tool.execute({ path: target, content: 'x' }, ctx()))).toContain('outside the workspace');
    }
    symlinkSync(path.join(base, 'outside'), path.join(base, 'ws', 'out'));
    expect(text(await tool.execute({ path: 'out/x.txt', content: 'x' }, ctx()))).toContain('outside the workspace');
    expect(readdirSync(path.join(base, 'outside'))).toEqual([]);
  });

  it('Scenario: writing through a link to a file outside is refused', async () => {
    writeFileSync(path.join(base, 'outside', 'target.txt'), 'keep');
    symlinkSync(path.join(base, 'outside', 'target.txt'), path.join(base, 'ws', 'link.txt'));
    expect(text(await tool.execute({ path: 'link.txt', content: 'x' }, ctx()))).toContain('outside the workspace');
    expect(readFileSync(path.join(base, 'outside', 'target.txt'), 'utf8')).toBe('keep');
  });

  it('Scenario: a skill root is refused even when the workspace contains it', async () => {
    const overData = new WriteFileTool(new WorkspacePaths(path.join(base, 'data'), [path.join(base, 'data', 'skills')]));
    const out = await overData.execute({ path: 'skills/user/demo/SKILL.md', content: 'x' }, ctx());
    expect(out).toEqual({
      model:
        'Error: this path is inside a protected Skill directory and cannot be changed with the generic file tools; ' +
        'call agent_skill_manage to create or update Skills.',
      ok: false,
    });
    expect(readdirSync(path.join(base, 'data', 'skills', 'user'))).toEqual([]);
    expect(await overData.execute({ path: 'notes/n.md', content: 'ok' }, ctx())).toBe('Wrote notes/n.md (2 characters)');
  });

  it('Scenario: a directory cannot be overwritten', async () => {
    mkdirSync(path.join(base, 'ws', 'd'));
    expect(text(await tool.execute({ path: 'd', content: 'x' }, ctx()))).toBe('Error: d is a directory');
    expect(text(await tool.execute({ path: '', content: 'x' }, ctx()))).toBe('Error: . is a directory');
  });

  it('Scenario: content must be a string', async () => {
    await expect(tool.execute({ path: 'a.txt', content: 42 }, ctx())).rejects.toThrow("argument 'content' must be a string");
  });
});
