import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTool, ToolResult } from '../agent-tool';
import { loadConfig } from '../../config/app-config';
import { createBuiltinTools } from './builtin-tools';

/**
 * openspec approvals "Requirement: The model cannot change what it may do": the generic file tools never write the
 * server's approvals (tool policies, rules, Skill grants, audit), MCP catalogs and OAuth tokens, or the config dir's
 * settings and keys — outside the workspace they are refused as such, and inside it (a workspace configured over the
 * data or config dir) they are protected.
 */
describe('Server state write protection of the file tools', () => {
  let root: string;

  beforeEach(async () => {
    root = await fs.mkdtemp(join(tmpdir(), 'cashcode-state-'));
  });

  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  async function run(tool: AgentTool, args: Record<string, unknown>): Promise<string> {
    const result = await tool.execute(args, { chatId: 'c', turnId: 't', signal: new AbortController().signal }).catch((error: Error) => error.message);
    return typeof result === 'string' ? result : (result as ToolResult).model;
  }

  function tools(env: Record<string, string>): { write: AgentTool; edit: AgentTool } {
    const config = loadConfig({ CASHCODE_CONFIG_DIR: join(root, 'config'), CASHCODE_MCP_CATALOG: join(root, 'config', 'mcp.json'), ...env }, root);
    const list = createBuiltinTools({ config, logger: { log: () => undefined, warn: () => undefined, error: () => undefined } });
    return {
      write: list.find((tool) => tool.name === 'write_file') as AgentTool,
      edit: list.find((tool) => tool.name === 'edit_file') as AgentTool,
    };
  }

  const STATE_FILES = [
    'data/approvals/skill-grants.json',
    'data/approvals/tool-policies.json',
    'data/approvals/audit.jsonl',
    'data/memory/MEMORY.md',
    'data/memory/SOUL.md',
    'data/memory/MEMORY.provenance.jsonl',
    'data/mcp/oauth/x.json',
    'config/settings/llm.json',
    'config/settings/openai-compat.json',
    'config/mcp.json',
  ];

  async function seed(): Promise<void> {
    for (const rel of STATE_FILES) {
      await fs.mkdir(join(root, rel, '..'), { recursive: true });
      await fs.writeFile(join(root, rel), 'original');
    }
  }

  it('Scenario: with the workspace over the data and config dirs, write_file and edit_file refuse the approvals, grants, MCP catalog and settings', async () => {
    await seed();
    const { write, edit } = tools({ CASHCODE_DATA_DIR: join(root, 'data'), WORKSPACE_DIR: root });
    for (const rel of STATE_FILES) {
      expect(await run(write, { path: rel, content: '{"version":1,"grants":[]}' })).toMatch(/holds the server's own settings/);
      expect(await run(edit, { path: rel, old_string: 'original', new_string: 'changed' })).toMatch(/holds the server's own settings/);
      expect(await fs.readFile(join(root, rel), 'utf8')).toBe('original');
    }
    // a new file there is refused too, and an ordinary workspace path still works
    expect(await run(write, { path: 'data/approvals/new.json', content: '{}' })).toMatch(/holds the server's own settings/);
    await expect(fs.stat(join(root, 'data', 'approvals', 'new.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await run(write, { path: 'notes/ok.txt', content: 'fine' })).not.toMatch(/server's own settings|outside/);
  });

  it('Scenario: with the workspace over the data dir, the file tools cannot pair a sender, change an automation or reset the spend', async () => {
    const files = [
      'data/channels/telegram/pairings.json',
      'data/channels/telegram/conversations.json',
      'data/automations/a1.json',
      // an emptied ledger would forget the spend the limits count
      'data/usage/ledger.sqlite',
      'data/skill-evolution/proposals/p1.json',
    ];
    for (const rel of files) {
      await fs.mkdir(join(root, rel, '..'), { recursive: true });
      await fs.writeFile(join(root, rel), 'original');
    }
    const { write, edit } = tools({ CASHCODE_DATA_DIR: join(root, 'data'), WORKSPACE_DIR: root });
    // an approved private sender is the owner: a forged entry would hand the agent to a stranger's Telegram account
    const forged = '{"version":1,"pending":[],"senders":[{"kind":"user","id":"666","name":"attacker"}]}';
    for (const rel of files) {
      expect(await run(write, { path: rel, content: forged })).toMatch(/holds the server's own settings/);
      expect(await run(edit, { path: rel, old_string: 'original', new_string: forged })).toMatch(/holds the server's own settings/);
      expect(await fs.readFile(join(root, rel), 'utf8')).toBe('original');
    }
    expect(await run(write, { path: 'data/channels/telegram/new.json', content: '{}' })).toMatch(/holds the server's own settings/);
  });

  it('Scenario: with the workspace next to the approvals directory (the default), the file tools cannot reach it', async () => {
    await seed();
    const { write, edit } = tools({ CASHCODE_DATA_DIR: join(root, 'data') });
    for (const target of ['../approvals/skill-grants.json', join(root, 'data', 'approvals', 'skill-grants.json')]) {
      expect(await run(write, { path: target, content: 'x' })).toMatch(/outside the workspace/);
      expect(await run(edit, { path: target, old_string: 'original', new_string: 'x' })).toMatch(/outside the workspace/);
    }
    // a symbolic link in the workspace pointing there is no way around it
    await fs.symlink(join(root, 'data', 'approvals'), join(root, 'data', 'workspace', 'link'));
    expect(await run(write, { path: 'link/skill-grants.json', content: 'x' })).toMatch(/outside the workspace/);
    expect(await fs.readFile(join(root, 'data', 'approvals', 'skill-grants.json'), 'utf8')).toBe('original');
  });
});
