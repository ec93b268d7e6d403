import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { compileUserRegex, DEFAULT_GREP_LIMITS, GrepTool } from './grep.tool';
import { WorkspacePaths } from './workspace-paths';

const ctx = (signal = new AbortController().signal): ToolContext => ({ chatId: 'c1', turnId: 't1', signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(GrepTool.name, () => {
  let base: string;
  let tool: GrepTool;
  const ws = (...parts: string[]) => path.join(base, 'ws', ...parts);

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-grep-'));
    mkdirSync(ws('src', 'lib'), { recursive: true });
    mkdirSync(path.join(base, 'outside'));
    writeFileSync(path.join(base, 'outside', 'secret.txt'), 'TODO secret\n');
    writeFileSync(ws('src', 'a.py'), 'import os\n# TODO: one\nprint(1)\n');
    writeFileSync(ws('src', 'lib', 'b.ts'), 'const x = 1; // todo two\n// TODO three\n');
    writeFileSync(ws('notes.md'), 'nothing here\n');
    writeFileSync(ws('image.bin'), Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2]), Buffer.from('TODO')]));
    tool = new GrepTool(new WorkspacePaths(ws(), []));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: matching lines are listed as path:line: text, binary files skipped', async () => {
    expect(await tool.execute({ pattern: 'TODO' }, ctx())).toBe(
      'Matches for `TODO` (2 in total):\nsrc/a.py:2: # TODO: one\nsrc/lib/b.ts:2: // TODO three',
    );
    expect(tool.readOnly).toBe(true);
  });

  it('Scenario: file_pattern and path narrow the search; inline (?i) works', async () => {
    expect(await tool.execute({ pattern: '(?i)todo', file_pattern: '*.ts' }, ctx())).toBe(
      'Matches for `(?i)todo` (2 in total):\nsrc/lib/b.ts:1: const x = 1; // todo two\nsrc/lib/b.ts:2: // TODO three',
    );
    expect(await tool.execute({ pattern: 'import', path: 'src/a.py' }, ctx())).toBe(
      'Matches for `import` (1 in total):\nsrc/a.py:1: import os',
    );
  });

  it('Scenario: no match and invalid regex give their messages', async () => {
    expect(await tool.execute({ pattern: 'zzz' }, ctx())).toBe('No content matches `zzz`');
    expect(text(await tool.execute({ pattern: '(' }, ctx()))).toMatch(/^Error: invalid regular expression: /);
  });

  it('Scenario: at most 50 results are returned', async () => {
    writeFileSync(ws('many.txt'), Array.from({ length: 80 }, (_, i) => `hit ${i}`).join('\n'));
    const lines = text(await tool.execute({ pattern: '^hit', path: 'many.txt' }, ctx())).split('\n');
    expect(lines[0]).toBe('Matches for `^hit` (first 50 shown; there are more):');
    expect(lines.slice(1)).toHaveLength(50);
  });

  it('Scenario: links are not followed and escaping paths are refused', async () => {
    symlinkSync(path.join(base, 'outside'), ws('outdir'));
    symlinkSync(path.join(base, 'outside', 'secret.txt'), ws('leak.txt'));
    expect(text(await tool.execute({ pattern: 'secret' }, ctx()))).toBe('No content matches `secret`');
    expect(text(await tool.execute({ pattern: 'secret', path: 'outdir' }, ctx()))).toContain('outside the workspace');
    expect(text(await tool.execute({ pattern: 'secret', path: 'leak.txt' }, ctx()))).toContain('outside the workspace');
    expect(text(await tool.execute({ pattern: 'x', file_pattern: '../outside/*' }, ctx()))).toContain("must not contain '..'");
  });

  it('Scenario: a catastrophic regex returns within its time bound', async () => {
    const bounded = new GrepTool(new WorkspacePaths(ws(), []), { ...DEFAULT_GREP_LIMITS, timeoutMs: 300 });
    writeFileSync(ws('evil.txt'), `${'a'.repeat(5000)}b\n`.repeat(200));
    const started = Date.now();
    const out = await bounded.execute({ pattern: '(a+)+$', path: 'evil.txt' }, ctx());
    const elapsed = Date.now() - started;
    expect(text(out)).toMatch(/^Error: regex timed out after 0\.3s/);
    expect(elapsed).toBeLessThan(3000);
  });

  it('Scenario: cancelling the turn stops the search', async () => {
    const bounded = new GrepTool(new WorkspacePaths(ws(), []), { ...DEFAULT_GREP_LIMITS, timeoutMs: 30_000 });
    writeFileSync(ws('evil.txt'), `${'a'.repeat(5000)}b\n`);
    const controller = new AbortController();
    const pending = bounded.execute({ pattern: '(a+)+$', path: 'evil.txt' }, ctx(controller.signal));
    setImmediate(() => controller.abort(new Error('cancelled')));
    await expect(pending).rejects.toThrow('cancelled');
  });

  it('Scenario: Python named groups are accepted', () => {
    expect(compileUserRegex('(?P<word>\\w+) (?P=word)')).toEqual({ ok: true, source: '(?<word>\\w+) \\k<word>', flags: '' });
  });
});
