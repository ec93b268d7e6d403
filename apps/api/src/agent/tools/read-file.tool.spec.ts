import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { ReadFileTool } from './read-file.tool';
import { WorkspacePaths } from './workspace-paths';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(ReadFileTool.name, () => {
  let base: string;
  let tool: ReadFileTool;
  const file = (rel: string, content: string | Buffer) => writeFileSync(path.join(base, 'ws', rel), content);

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-read-'));
    mkdirSync(path.join(base, 'ws', 'dir'), { recursive: true });
    writeFileSync(path.join(base, 'outside.txt'), 'top secret');
    tool = new ReadFileTool(new WorkspacePaths(path.join(base, 'ws'), []));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: a small file is returned whole', async () => {
    file('a.txt', 'line 1\nline 2\n');
    expect(await tool.execute({ path: 'a.txt' }, ctx())).toBe('line 1\nline 2\n');
    expect(tool.readOnly).toBe(true);
  });

  it('Scenario: more than 500 lines are truncated with a note', async () => {
    file('long.txt', Array.from({ length: 1200 }, (_, i) => `row ${i + 1}`).join('\n'));
    const out = text(await tool.execute({ path: 'long.txt' }, ctx()));
    const [body, note] = out.split('\n\n[');
    expect(body?.split('\n')).toHaveLength(500);
    expect(body?.endsWith('row 500')).toBe(true);
    expect(note).toBe('Content truncated: 1200 lines in total; showing lines 1-500. Call read_file with offset=501 to continue.]');
  });

  it('Scenario: offset and limit page through a file', async () => {
    file('long.txt', Array.from({ length: 1200 }, (_, i) => `row ${i + 1}`).join('\n'));
    const out = text(await tool.execute({ path: 'long.txt', offset: 1190, limit: 20 }, ctx()));
    expect(out.split('\n\n[')[0]).toBe(Array.from({ length: 11 }, (_, i) => `row ${1190 + i}`).join('\n'));
    expect(out).toContain('showing lines 1190-1200.]');
    expect(text(await tool.execute({ path: 'long.txt', offset: '3', limit: '2' }, ctx()))).toMatch(/^row 3\nrow 4\n\n\[/);
  });

  it('Scenario: an offset past the end is an error', async () => {
    file('a.txt', 'one\ntwo\n');
    expect(await tool.execute({ path: 'a.txt', offset: 5 }, ctx())).toEqual({
      model: 'Error: offset 5 is past the end of a.txt (2 lines)',
      ok: false,
    });
  });

  it('Scenario: a bad limit is an argument error', async () => {
    file('a.txt', 'x');
    await expect(tool.execute({ path: 'a.txt', limit: 0 }, ctx())).rejects.toThrow("argument 'limit' must be between 1 and 2000");
    await expect(tool.execute({}, ctx())).rejects.toThrow("missing required argument 'path'");
  });

  it('Scenario: missing file and directory give their messages', async () => {
    expect(text(await tool.execute({ path: 'nope.txt' }, ctx()))).toBe('Error: file not found: nope.txt');
    expect(text(await tool.execute({ path: 'dir' }, ctx()))).toBe('Error: dir is not a file');
  });

  it('Scenario: invalid UTF-8 is decoded with replacement characters', async () => {
    file('bin.txt', Buffer.from([0x61, 0xff, 0x62]));
    expect(await tool.execute({ path: 'bin.txt' }, ctx())).toBe('a\uFFFDb');
  });

  it('Scenario: an empty file says so', async () => {
    file('empty.txt', '');
    expect(await tool.execute({ path: 'empty.txt' }, ctx())).toBe('(empty file)');
  });

  it('Scenario: reading through a link pointing out is refused', async () => {
    symlinkSync(path.join(base, 'outside.txt'), path.join(base, 'ws', 'leak.txt'));
    const out = text(await tool.execute({ path: 'leak.txt' }, ctx()));
    expect(out).toBe("Error: path 'leak.txt' is outside the workspace; access denied");
    expect(text(await tool.execute({ path: '../outside.txt' }, ctx()))).toContain('outside the workspace');
  });
});
