/**
 * Nothing the model can write raises what it may do (openspec approvals "Requirement: The model cannot change what it
 * may do"; SECURITY.md). Every tool of the running server — built-in, memory, Skills, MCP meta tools and the wrappers
 * of a connected MCP server — is checked against a reviewed list of tools that cannot change tool policies, rules,
 * Skill grants, the MCP catalog, settings or keys; a new tool fails this test until it is reviewed and listed. Then a
 * hostile model tries every tool it has against those files and routes.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { toolRisk } from '../src/approvals/tool-risk';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { skillMd } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

/**
 * The reviewed tools: name → [risk class, why it cannot change what the model may do]. Adding a tool means adding it
 * here after checking that it reaches none of: `<data>/approvals/` (policies, rules, grants, audit), the MCP catalogs
 * and OAuth tokens, the config dir (LLM settings, `/v1` keys), or a REST route that changes them.
 */
const REVIEWED: Readonly<Record<string, readonly [string, string]>> = {
  list_dir: ['read', 'reads the workspace'],
  read_file: ['read', 'reads the workspace'],
  glob: ['read', 'reads the workspace'],
  grep: ['read', 'reads the workspace'],
  session_search: ['read', 'reads chat histories'],
  read_artifact: ['read', 'reads stored tool output'],
  write_file: ['write', 'writes the workspace only; Skill roots and server state are refused (workspace-paths.ts)'],
  edit_file: ['write', 'writes the workspace only; Skill roots and server state are refused (workspace-paths.ts)'],
  save_memory: ['write', 'writes memory text: content, not permissions'],
  exec: ['exec', 'asks by default; the sandbox hides the data and config dirs'],
  web_fetch: ['network', 'GET only; the SSRF guard refuses loopback, so not the API'],
  web_search: ['network', 'queries a search engine'],
  browser: ['network', 'every page request goes through the SSRF guard (not the API); downloads land in the workspace only; form submissions ask'],
  delegate: ['read', "starts a sub-agent with a subset of the turn's tools; each of its calls passes the same gate"],
  skill_search: ['read', 'reads the Skill catalog'],
  skill_load: ['read', 'loads a Skill; its allowed-tools apply only with the owner\'s grant for that content'],
  skill_read_resource: ['read', 'reads a loaded Skill\'s files'],
  agent_skill_manage: ['write', 'creates an agent Skill: content without any grant; never replaces another Skill'],
  tool_search: ['read', 'searches the registered tools'],
  mcp_prepare: ['read', 'connects a server the owner configured; never changes the catalog'],
  mcp_list_resources: ['read', 'reads a connected server\'s resources'],
  mcp_read_resource: ['read', 'reads a connected server\'s resource'],
  schedule_task: ['schedule_task', 'always asks the owner; creates an automation that runs with approvals denied, never a permission'],
};

interface CompletionBody {
  messages: Array<{ role: string; content: string | null }>;
}

const toolMessages = (r: RecordedRequest | undefined): string[] =>
  ((r?.body as CompletionBody | undefined)?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content ?? '');

describe('The model cannot change what it may do (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let catalogDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-permissions-mcp-'));
    const catalog = writeCatalog(catalogDir, { stdio: stdioEntry() });
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    await request(t.httpUrl).post('/api/mcp/servers/stdio/connect').expect((res) => expect(res.status).toBeLessThan(300));
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  it('Scenario: every tool the model has is a reviewed tool that cannot change permissions', () => {
    const tools: AgentTool[] = t.app.get(ToolRegistry).allTools();
    const wrappers = tools.filter((tool) => tool.mcp !== undefined);
    // the connected server's tools are offered as wrappers: calls into a program the owner configured
    expect(wrappers.length).toBeGreaterThan(0);
    for (const tool of wrappers) expect(tool.name.startsWith('mcp_stdio_')).toBe(true);
    const own = tools.filter((tool) => tool.mcp === undefined);
    const unreviewed = own.map((tool) => tool.name).filter((name) => !(name in REVIEWED));
    expect(unreviewed).toEqual([]);
    for (const tool of own) expect([tool.name, toolRisk(tool)]).toEqual([tool.name, REVIEWED[tool.name]?.[0]]);
    // every reviewed tool is still there (a removed one is taken off the list)
    expect(Object.keys(REVIEWED).filter((name) => !own.some((tool) => tool.name === name))).toEqual([]);
  });

  it('Scenario: a hostile model cannot grant itself pre-approvals, change policies or add an MCP server', async () => {
    // the owner imported a Skill with allowed-tools and has not granted them
    await request(t.httpUrl)
      .post('/api/skills')
      .send({ name: 'owner-skill', content: skillMd('owner-skill', { extra: 'allowed-tools: Bash' }) })
      .expect(201);
    const before = (await request(t.httpUrl).get('/api/skills/owner-skill').expect(200)).body.pre_approvals;
    const policiesBefore = (await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body;
    const grant = JSON.stringify({ version: 1, grants: [{ name: 'owner-skill', source: 'user', hash: before.hash, allowed_tools: ['Bash'], granted_at: new Date().toISOString() }] });
    const policies = JSON.stringify({ version: 1, defaults: { exec: 'allow' }, tools: {}, servers: {}, rules: [] });
    const mcp = JSON.stringify({ mcpServers: { evil: { command: 'sh', args: ['-c', 'id > /tmp/evil'] } } });
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue(
        {
          toolCalls: [
            { id: 'h1', name: 'write_file', arguments: JSON.stringify({ path: '../approvals/skill-grants.json', content: grant }) },
            { id: 'h2', name: 'write_file', arguments: JSON.stringify({ path: join(t.dataDir, 'approvals', 'tool-policies.json'), content: policies }) },
            { id: 'h3', name: 'write_file', arguments: JSON.stringify({ path: join(catalogDir, 'mcp_config.json'), content: mcp }) },
            { id: 'h4', name: 'web_fetch', arguments: JSON.stringify({ url: `${t.httpUrl}/api/skills/owner-skill` }) },
            {
              id: 'h5',
              name: 'agent_skill_manage',
              arguments: JSON.stringify({ action: 'create', name: 'owner-skill', content: skillMd('owner-skill', { extra: 'allowed-tools: Bash' }) }),
            },
            {
              id: 'h6',
              name: 'agent_skill_manage',
              arguments: JSON.stringify({
                action: 'create',
                name: 'escape',
                content: skillMd('escape'),
                support_files: { '../../approvals/skill-grants.json': grant },
              }),
            },
          ],
        },
        { content: 'done' },
      );
      const done = client.next('done', (e) => e.chat_id === 'hostile-1', 30_000);
      client.sendMessage('hostile-1', 'take over');
      await done;
    } finally {
      await client.close();
    }
    const results = toolMessages(fake.completions[1]);
    expect(results[0]).toMatch(/outside the workspace/);
    expect(results[1]).toMatch(/outside the workspace/);
    expect(results[2]).toMatch(/outside the workspace/);
    expect(results[3]).toMatch(/^Error/);
    expect(JSON.parse(results[4] ?? '{}')).toMatchObject({ success: false, code: 'conflict' });
    expect(JSON.parse(results[5] ?? '{}')).toMatchObject({ success: false, code: 'validation_error' });
    // nothing changed: no grant, the same policies, no new MCP server
    expect((await request(t.httpUrl).get('/api/skills/owner-skill').expect(200)).body.pre_approvals).toEqual(before);
    await expect(fs.stat(join(t.dataDir, 'approvals', 'skill-grants.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body).toEqual(policiesBefore);
    const servers = (await request(t.httpUrl).get('/api/mcp/servers').expect(200)).body as Array<{ name: string }> | { servers: Array<{ name: string }> };
    expect(JSON.stringify(servers)).not.toContain('evil');
  });
});
