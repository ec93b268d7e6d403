import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { ListDirTool } from './list-dir.tool';
import { WorkspacePaths } from './workspace-paths';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(ListDirTool.name, () => {
  let base: string;
  let tool: ListDirTool;
  const ws = (...parts: string[]) => path.join(base, 'ws', ...parts);

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-list-'));
    mkdirSync(ws('zdir'), { recursive: true });
    mkdirSync(ws('adir'));
    mkdirSync(path.join(base, 'outside'));
    writeFileSync(ws('b.txt'), 'b');
    writeFileSync(ws('a.txt'), 'a');
    tool = new ListDirTool(new WorkspacePaths(ws(), []));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: directories come first, each group sorted by name', async () => {
    symlinkSync(path.join(base, 'outside'), ws('link'));
    expect(await tool.execute({}, ctx())).toBe(
      'Directory: (workspace)\n\n[dir]  adir\n[dir]  zdir\n[file] a.txt\n[file] b.txt\n[link] link',
    );
  });

  it('Scenario: at most 200 entries are listed with a note', async () => {
    mkdirSync(ws('many'));
    for (let i = 0; i < 250; i += 1) writeFileSync(ws('many', `f${String(i).padStart(3, '0')}.txt`), '');
    const lines = text(await tool.execute({ path: 'many' }, ctx())).split('\n');
    expect(lines[0]).toBe('Directory: many');
    expect(lines.filter((line) => line.startsWith('[file]'))).toHaveLength(200);
    expect(lines[lines.length - 1]).toBe('(showing the first 200 of 250 entries)');
  });

  it('Scenario: missing, non-directory and escaping paths give clear errors', async () => {
    expect(text(await tool.execute({ path: 'nope' }, ctx()))).toBe('Error: directory not found: nope');
    expect(text(await tool.execute({ path: 'a.txt' }, ctx()))).toBe('Error: a.txt is not a directory');
    expect(text(await tool.execute({ path: '..' }, ctx()))).toBe("Error: path '..' is outside the workspace; access denied");
    symlinkSync(path.join(base, 'outside'), ws('out'));
    expect(text(await tool.execute({ path: 'out' }, ctx()))).toContain('outside the workspace');
  });

  it('Scenario: an empty directory says so', async () => {
    expect(await tool.execute({ path: 'adir' }, ctx())).toBe('Directory: adir\n\n(empty)');
  });
});
