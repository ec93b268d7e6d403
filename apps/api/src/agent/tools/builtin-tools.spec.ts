import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../config/app-config';
import type { ToolContext } from '../agent-tool';
import { createBuiltinTools } from './builtin-tools';

const quietLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };
const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });

describe('createBuiltinTools', () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'cc-builtin-'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const config = (env: Record<string, string> = {}) => loadConfig({ CASHCODE_DATA_DIR: path.join(base, 'data'), ...env }, base);

  it('Scenario: the built-in tools are created with their read-only flags and the workspace exists', () => {
    const tools = createBuiltinTools({ config: config(), logger: quietLogger });
    expect(tools.map((tool) => [tool.name, tool.readOnly])).toEqual([
      ['web_fetch', true],
      ['web_search', true],
      ['read_file', true],
      ['write_file', false],
      ['edit_file', false],
      ['list_dir', true],
      ['glob', true],
      ['grep', true],
      ['exec', false],
    ]);
    expect(existsSync(path.join(base, 'data', 'workspace'))).toBe(true);
    for (const tool of tools) {
      expect(tool.parameters.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(20);
    }
  });

  it('Scenario: CASHCODE_EXEC_ENABLED=false removes exec', () => {
    const tools = createBuiltinTools({ config: config({ CASHCODE_EXEC_ENABLED: 'false' }), logger: quietLogger });
    expect(tools.map((tool) => tool.name)).not.toContain('exec');
  });

  it('Scenario: the default skill root under the data dir is write-protected', async () => {
    const cfg = config({ WORKSPACE_DIR: path.join(base, 'data') });
    const write = createBuiltinTools({ config: cfg, logger: quietLogger }).find((tool) => tool.name === 'write_file');
    const out = await write?.execute({ path: 'skills/user/x/SKILL.md', content: 'x' }, ctx());
    expect(out).toMatchObject({ ok: false });
    expect(existsSync(path.join(base, 'data', 'skills', 'user', 'x'))).toBe(false);
  });
});
