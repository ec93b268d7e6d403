/**
 * SkillsAdminService, SkillTurnService and the model's skill tools on real Skill roots in a temp dir, with the real
 * catalog, store, tool registry and chat memory. The MCP side is a stand-in with no configured server: none of
 * these Skills requires one (MCP preparation is covered by the MCP service spec and the e2e suites).
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolRegistry } from '../agent/tool-registry';
import type { AppConfig } from '../config/app-config';
import type { McpService } from '../mcp/mcp.service';
import type { HistoryLogStore } from '../memory/history-log.store';
import { createMemoryStores } from '../memory/memory-stores';
import { SkillCatalog } from './skill-catalog';
import { SkillStore } from './skill-store';
import { AgentSkillManageTool, SkillLoadTool, SkillReadResourceTool, SkillSearchTool } from './skill-tools';
import { SkillTurnService } from './skill-turn.service';
import { ApprovalAuditLog } from '../approvals/approval-audit';
import { SkillGrantStore } from './skill-grant-store';
import { SkillGrantsService } from './skill-grants.service';
import { SkillsAdminService } from './skills-admin.service';
import { SkillError } from './skills.errors';

function skillMd(name: string, extra = '', body = `# ${name}\n\nFollow these steps for ${name}.`): string {
  return ['---', `name: ${name}`, `description: The ${name} test skill`, ...(extra ? [extra] : []), '---', '', body, ''].join('\n');
}

interface Fixture {
  dir: string;
  grants: SkillGrantsService;
  store: SkillStore;
  catalog: SkillCatalog;
  registry: ToolRegistry;
  memory: HistoryLogStore;
  admin: SkillsAdminService;
  turns: SkillTurnService;
}

async function fixture(): Promise<Fixture> {
  const dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-skills-'));
  const store = new SkillStore({
    builtin: join(dir, 'builtin'),
    user: join(dir, 'user'),
    agent: join(dir, 'agent'),
    snapshots: join(dir, 'snapshots'),
  });
  await fs.mkdir(join(dir, 'builtin'), { recursive: true });
  await store.prepare();
  const registry = new ToolRegistry();
  const catalog = new SkillCatalog(
    store,
    { hasTool: (name) => registry.has(name), mcpServerConfigured: () => false },
    { binPath: process.env['PATH'] ?? '', envNames: new Set() },
  );
  const memory = createMemoryStores({ memoryDir: join(dir, 'memory') }).history;
  const mcp = { list: () => [], prepareServer: () => Promise.resolve('Error: no MCP server in this test') } as unknown as McpService;
  await catalog.refresh();
  const dataConfig = { dataDir: join(dir, 'data') } as AppConfig;
  const grants = new SkillGrantsService(store, catalog, new SkillGrantStore(dataConfig), new ApprovalAuditLog(dataConfig));
  return {
    dir,
    grants,
    store,
    catalog,
    registry,
    memory,
    admin: new SkillsAdminService(store, catalog),
    turns: new SkillTurnService(store, catalog, registry, memory, mcp, grants),
  };
}

async function rejection(promise: Promise<unknown>): Promise<SkillError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SkillError);
    return error as SkillError;
  }
  throw new Error('expected a SkillError');
}

describe('SkillsAdminService', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await fixture();
  });
  afterEach(() => fs.rm(f.dir, { recursive: true, force: true }));

  it('Scenario: create, list, detail, content and validation of a user Skill; no absolute path in the answers', async () => {
    const created = await f.admin.create({ name: 'weather', content: skillMd('weather'), source: 'user' });
    expect(created).toMatchObject({ name: 'weather', source: 'user', enabled: true, path: 'skills/user/weather' });
    const list = await f.admin.list({ page: 1, pageSize: 10 });
    expect(list.items.map((item) => item.name)).toEqual(['weather']);
    expect(list.total).toBe(1);
    const detail = await f.admin.get('weather');
    expect(detail.body_preview).toContain('Follow these steps for weather.');
    expect(detail.versions).toEqual([]);
    const content = await f.admin.content('weather');
    expect(content.content).toBe(skillMd('weather'));
    expect(await f.admin.validate('weather')).toEqual({ valid: true, name: 'weather', hash: content.hash, errors: [] });
    expect((await f.admin.validate('weather', '---\nname: other\n---\n')).valid).toBe(false);
    expect(JSON.stringify([created, list, detail, content])).not.toContain(f.dir);
  });

  it('Scenario: create rejects a taken name, a bad name, bad content and the built-in root', async () => {
    await f.admin.create({ name: 'weather', content: skillMd('weather'), source: 'user' });
    expect((await rejection(f.admin.create({ name: 'weather', content: skillMd('weather'), source: 'agent' }))).code).toBe('conflict');
    expect((await rejection(f.admin.create({ name: 'Bad Name', content: skillMd('x'), source: 'user' }))).code).toBe('validation');
    expect((await rejection(f.admin.create({ name: 'mail', content: skillMd('other'), source: 'user' }))).code).toBe('validation');
    expect((await rejection(f.admin.create({ name: 'mail', content: skillMd('mail'), source: 'builtin' }))).code).toBe('permission');
    expect(
      (await rejection(f.admin.create({ name: 'mail', content: skillMd('mail'), source: 'user', supportFiles: { '../x': 'y' } }))).code,
    ).toBe('validation');
    expect((await f.admin.list({ page: 1, pageSize: 10 })).total).toBe(1);
  });

  it('Scenario: replace checks the expected hash and snapshots; rollback restores; disable and delete', async () => {
    await f.admin.create({ name: 'weather', content: skillMd('weather'), source: 'user' });
    const before = await f.admin.content('weather');
    const stale = await rejection(f.admin.replace('weather', { content: skillMd('weather', '', 'v2'), expectedHash: 'f'.repeat(64) }));
    expect(stale.code).toBe('conflict');
    const replaced = await f.admin.replace('weather', { content: skillMd('weather', '', 'v2'), expectedHash: before.hash });
    expect(replaced.snapshot).toEqual(expect.any(String));
    expect((await f.admin.content('weather')).content).toContain('v2');
    const { versions } = await f.admin.versions('weather');
    expect(versions).toEqual([replaced.snapshot]);
    await f.admin.rollback('weather', replaced.snapshot);
    expect((await f.admin.content('weather')).hash).toBe(before.hash);

    const disabled = await f.admin.setEnabled('weather', false);
    expect(disabled.enabled).toBe(false);
    expect((await f.admin.list({ page: 1, pageSize: 10, enabled: true })).total).toBe(0);
    await f.admin.delete('weather');
    expect((await rejection(f.admin.get('weather'))).code).toBe('not_found');
  });

  it('Scenario: an invalid package is reported and can be removed (moved to the snapshots)', async () => {
    await fs.mkdir(join(f.dir, 'user', 'broken'), { recursive: true });
    await fs.writeFile(join(f.dir, 'user', 'broken', 'SKILL.md'), 'no frontmatter');
    const list = await f.admin.list({ page: 1, pageSize: 10 });
    expect(list.invalid).toEqual({ 'user:broken': ['SKILL.md must start with YAML frontmatter'] });
    expect((await rejection(Promise.resolve().then(() => f.admin.deleteInvalid('builtin', 'broken')))).code).toBe('permission');
    const removed = await f.admin.deleteInvalid('user', 'broken');
    expect(removed).toMatchObject({ source: 'user', directory: 'broken' });
    await expect(fs.stat(join(f.dir, 'user', 'broken'))).rejects.toThrow();
    expect((await rejection(f.admin.deleteInvalid('user', 'broken'))).code).toBe('not_found');
  });
});

describe('SkillTurnService and the skill tools', () => {
  let f: Fixture;
  const ctx = { chatId: 'chat-1', turnId: 'a'.repeat(32), signal: new AbortController().signal };
  beforeEach(async () => {
    f = await fixture();
    await f.admin.create({
      name: 'release',
      content: skillMd('release', 'allowed-tools: read_file exec(git status)'),
      source: 'user',
      supportFiles: { 'references/guide.md': 'the guide' },
    });
    // the owner grants its allowed-tools for this content (without a grant they pre-approve nothing)
    const status = await f.grants.status('user', 'release');
    await f.grants.grant('release', status?.hash);
  });
  afterEach(() => fs.rm(f.dir, { recursive: true, force: true }));

  it('Scenario: explicit selections load before the model runs, pre-approve allowed-tools for the turn only', async () => {
    const result = await f.turns.prepareExplicitSkills(['release', 'release'], ctx);
    expect(result.skipped).toEqual([]);
    expect(result.systemMessage).toMatch(/^The user explicitly selected these Skills:\n\n\[Skill loaded: release/);
    expect(result.systemMessage).toContain('Follow these steps for release.');
    expect(result.receipts).toHaveLength(1);
    expect(result.loaded).toEqual([expect.objectContaining({ name: 'release', version: 1 })]);
    const pre = f.turns.preApprovals(ctx.chatId);
    expect(pre?.tools.has('read_file')).toBe(true);
    f.turns.endTurn(ctx.chatId, ctx.turnId);
    expect(f.turns.preApprovals(ctx.chatId)).toBeNull();
    // the chat remembers the activation, and the prompt section lists it
    const metadata = (await f.memory.getChat(ctx.chatId)).metadata;
    expect(Object.keys(metadata.activated_skills ?? {})).toEqual(['release']);
    expect(await f.turns.recentSkillsSummary(ctx.chatId)).toContain('- release: The release test skill');
    expect(await f.turns.skillPromptSections(ctx.chatId)).toHaveLength(2);
  });

  it('Scenario: an unknown selected Skill is skipped with the skill_load error', async () => {
    const result = await f.turns.prepareExplicitSkills(['nope'], ctx);
    expect(result).toEqual({
      systemMessage: null,
      receipts: [],
      loaded: [],
      skipped: [{ name: 'nope', code: 'skill_not_found', detail: 'Unable to load @nope: {"error": "skill_not_found", "name": "nope", "suggestions": []}' }],
    });
  });

  it('Scenario: skill_search, skill_load (then already loaded) and skill_read_resource', async () => {
    const search = JSON.parse(await new SkillSearchTool(f.catalog).execute({ query: 'release', limit: 3 })) as {
      skills: { name: string; score: number; requires?: unknown }[];
    };
    expect(search.skills.map((hit) => hit.name)).toEqual(['release']);
    expect(search.skills[0]?.requires).toBeUndefined();

    const read = new SkillReadResourceTool(f.turns, f.catalog, f.store);
    expect(await read.execute({ name: 'release', path: 'references/guide.md' }, ctx)).toBe(
      'Error: load the Skill before reading its resources',
    );
    f.turns.beginTurn(ctx.chatId, ctx.turnId);
    const load = new SkillLoadTool(f.turns);
    const first = await load.execute({ name: ' release ' }, ctx);
    expect(first.public).toBe('Loaded Skill: release');
    expect(first.model).toContain('Skill package: skills/user/release');
    expect(first.model).toContain('Pre-approved while this Skill is loaded');
    const again = await load.execute({ name: 'release' }, ctx);
    expect(again.public).toBe('Skill already loaded: release');
    expect(await read.execute({ name: 'release', path: 'references/guide.md' }, ctx)).toEqual({
      model: '[Skill resource read: release/references/guide.md]\n\nthe guide',
      public: '[Skill resource read: release/references/guide.md]',
      persisted: '[Skill resource read: release/references/guide.md]',
    });
    expect(await read.execute({ name: 'release', path: '../escape' }, ctx)).toMatch(/^Error: /);
    const missing = await load.execute({ name: 'missing' }, ctx);
    expect(missing.ok).toBe(false);
  });

  it('Scenario: agent_skill_manage creates an agent Skill and reports failures as JSON, never throwing', async () => {
    const manage = new AgentSkillManageTool(f.admin, f.store, f.grants);
    const ok = JSON.parse(await manage.execute({ action: 'create', name: 'notes', content: skillMd('notes'), reason: 'recurring' }));
    expect(ok).toMatchObject({ success: true, action: 'create', name: 'notes', source: 'agent', enabled: true });
    expect((await f.admin.get('notes')).source).toBe('agent');
    const taken = JSON.parse(await manage.execute({ action: 'create', name: 'notes', content: skillMd('notes') }));
    expect(taken).toMatchObject({ success: false, code: 'conflict' });
    const unsupported = JSON.parse(await manage.execute({ action: 'delete', name: 'notes', content: '' }));
    expect(unsupported).toMatchObject({ success: false, code: 'unsupported_action' });
    const badFiles = JSON.parse(await manage.execute({ action: 'create', name: 'x', content: skillMd('x'), support_files: { a: 1 } }));
    expect(badFiles).toMatchObject({ success: false, code: 'validation_error' });
  });
});
