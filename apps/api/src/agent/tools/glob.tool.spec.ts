import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ToolContext, ToolResult } from '../agent-tool';
import { GlobTool } from './glob.tool';
import { normalizeGlobPattern } from './workspace-glob';
import { WorkspacePaths } from './workspace-paths';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

describe(GlobTool.name, () => {
  let base: string;
  let tool: GlobTool;
  const ws = (...parts: string[]) => path.join(base, 'ws', ...parts);

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-glob-'));
    mkdirSync(ws('src', 'deep', 'er'), { recursive: true });
    mkdirSync(path.join(base, 'outside'));
    writeFileSync(path.join(base, 'outside', 'secret.py'), '');
    writeFileSync(ws('top.py'), '');
    writeFileSync(ws('src', 'a.py'), '');
    writeFileSync(ws('src', 'deep', 'er', 'b.py'), '');
    writeFileSync(ws('src', 'readme.md'), '');
    tool = new GlobTool(new WorkspacePaths(ws(), []));
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('Scenario: the pattern applies at every depth and results are sorted', async () => {
    expect(await tool.execute({ pattern: '*.py' }, ctx())).toBe(
      'Matches for `*.py` (3 in total):\n  src/a.py\n  src/deep/er/b.py\n  top.py',
    );
    expect(tool.readOnly).toBe(true);
  });

  it('Scenario: a base path narrows the search and results stay workspace-relative; directories end with /', async () => {
    expect(await tool.execute({ pattern: 'de*', path: 'src' }, ctx())).toBe('Matches for `de*` (1 in total):\n  src/deep/');
  });

  it('Scenario: no match says so', async () => {
    expect(await tool.execute({ pattern: '*.rs' }, ctx())).toBe('No files match `*.rs`');
  });

  it('Scenario: at most 100 results are shown', async () => {
    mkdirSync(ws('many'));
    for (let i = 0; i < 130; i += 1) writeFileSync(ws('many', `n${String(i).padStart(3, '0')}.log`), '');
    const lines = text(await tool.execute({ pattern: '*.log' }, ctx())).split('\n');
    expect(lines[0]).toBe('Matches for `*.log` (130 in total):');
    expect(lines.filter((line) => line.startsWith('  many/'))).toHaveLength(100);
    expect(lines[lines.length - 1]).toBe('(showing the first 100)');
  });

  it('Scenario: symbolic links are neither followed nor listed', async () => {
    symlinkSync(path.join(base, 'outside'), ws('outlink'));
    symlinkSync(path.join(base, 'outside', 'secret.py'), ws('leak.py'));
    const out = text(await tool.execute({ pattern: '*.py' }, ctx()));
    expect(out).not.toContain('secret');
    expect(out).not.toContain('leak');
    expect(text(await tool.execute({ pattern: '*', path: 'outlink' }, ctx()))).toContain('outside the workspace');
  });

  it('Scenario: escaping patterns are refused', async () => {
    for (const pattern of ['../outside/*.py', '/etc/*', 'src/../../*']) {
      expect(text(await tool.execute({ pattern }, ctx()))).toMatch(/^Error: pattern must/);
    }
  });

  it('Scenario: the walk is bounded in entries', async () => {
    const bounded = new GlobTool(new WorkspacePaths(ws(), []), { maxEntries: 2, timeoutMs: 10_000 });
    const out = text(await bounded.execute({ pattern: '*.py' }, ctx()));
    expect(out).toContain('the search stopped early');
  });

  it('Scenario: patterns are normalised to any depth', () => {
    expect(normalizeGlobPattern('*.py', 'pattern')).toBe('**/*.py');
    expect(normalizeGlobPattern('./src/*.ts', 'pattern')).toBe('**/src/*.ts');
    expect(normalizeGlobPattern('**/x', 'pattern')).toBe('**/x');
  });
});
