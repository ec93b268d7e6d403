import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTool, ToolResult } from '../agent/agent-tool';
import { createBuiltinTools } from '../agent/tools/builtin-tools';
import { loadConfig } from '../config/app-config';

/**
 * openspec skills "Requirement: Write protection": every Skill root is protected from the generic file tools, wherever
 * the workspace points.
 */
describe('Skill roots write protection', () => {
  let root: string;

  beforeEach(async () => {
    root = await fs.mkdtemp(join(tmpdir(), 'cashcode-protect-'));
  });

  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  async function run(tool: AgentTool, args: Record<string, unknown>): Promise<string> {
    const result = await tool.execute(args, { chatId: 'c', turnId: 't', signal: new AbortController().signal }).catch((error: Error) => error.message);
    return typeof result === 'string' ? result : (result as ToolResult).model;
  }

  it('Scenario: with the workspace over the data dir and the built-in root, write_file and edit_file refuse every Skill root', async () => {
    const config = {
      ...loadConfig({ CASHCODE_DATA_DIR: join(root, 'data'), WORKSPACE_DIR: root }, root),
      skillsBuiltinDir: join(root, 'builtin-skills'),
    };
    await fs.mkdir(join(config.skillsBuiltinDir, 'weather'), { recursive: true });
    await fs.writeFile(join(config.skillsBuiltinDir, 'weather', 'SKILL.md'), 'original');
    const tools = createBuiltinTools({ config, logger: { log: () => undefined, warn: () => undefined, error: () => undefined } });
    const write = tools.find((tool) => tool.name === 'write_file') as AgentTool;
    const edit = tools.find((tool) => tool.name === 'edit_file') as AgentTool;
    for (const target of [
      'builtin-skills/weather/SKILL.md',
      'data/skills/user/x/SKILL.md',
      'data/skills/agent/x/SKILL.md',
      'data/skill-snapshots/user/x/1-00000000/SKILL.md',
    ]) {
      expect(await run(write, { path: target, content: 'hijack' })).toMatch(/protected Skill directory/);
    }
    expect(await run(edit, { path: 'builtin-skills/weather/SKILL.md', old_string: 'original', new_string: 'x' })).toMatch(
      /protected Skill directory/,
    );
    expect(await fs.readFile(join(config.skillsBuiltinDir, 'weather', 'SKILL.md'), 'utf8')).toBe('original');
    // an ordinary workspace path still works
    expect(await run(write, { path: 'notes/ok.txt', content: 'fine' })).not.toMatch(/protected/);
    expect(await fs.readFile(join(root, 'notes', 'ok.txt'), 'utf8')).toBe('fine');
  });
});
