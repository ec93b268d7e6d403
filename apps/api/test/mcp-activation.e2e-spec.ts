/**
 * Deferred activation (openspec agent-runner, mcp, chat): tool_search, mcp_prepare with exact ownership, the per-chat
 * activation set persisted in metadata.json (LRU 50), per-turn selected connectors, persistence across a restart and
 * the purge on disconnect / update. Tools run through the agent's ToolRegistry as the runner runs them.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { ToolContext } from '../src/agent/agent-tool';
import { ToolRegistry, type ToolScope } from '../src/agent/tool-registry';
import { McpActivations } from '../src/mcp/mcp-activations';
import { McpService } from '../src/mcp/mcp.service';
import {
  ensureMcpServersBuilt,
  startTestHttpServer,
  stdioEntry,
  writeCatalog,
  type RunningMcpServer,
} from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';

const SECRET = 'activation-secret-3e8d71';

describe('MCP deferred activation (e2e)', () => {
  let app: TestApp;
  let dataDir: string;
  let catalogDir: string;
  let sse: RunningMcpServer;
  let registry: ToolRegistry;
  let mcp: McpService;

  async function startApp(): Promise<void> {
    app = await startTestApp({ dataDir, env: { CASHCODE_MCP_CATALOG: join(catalogDir, 'mcp_config.json') } });
    registry = app.app.get(ToolRegistry, { strict: false });
    mcp = app.app.get(McpService, { strict: false });
  }

  beforeAll(async () => {
    ensureMcpServersBuilt();
    sse = await startTestHttpServer('sse', { requireHeaders: [`X-Api-Key=${SECRET}`] });
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-act-'));
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-act-cat-'));
    writeCatalog(catalogDir, {
      hello: stdioEntry(),
      hello_extra: { ...stdioEntry({ CASHCODE_MCP_TEST_TOOLS: '0', CASHCODE_MCP_EXTRA_TOOLS: '60' }), display_name: 'Extra' },
      offline: { type: 'sse', display_name: 'Offline weather', description: 'Weather forecasts', url: 'http://127.0.0.1:9/sse' },
    });
    await startApp();
    await request(app.httpUrl)
      .post('/api/mcp/servers')
      .send({ name: 'remote', display_name: 'Remote', url: sse.url, headers: { 'X-Api-Key': SECRET } })
      .expect(201);
  });

  afterAll(async () => {
    await app?.close();
    await sse?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  const ctx = (chatId: string): ToolContext => ({ chatId, turnId: 'b'.repeat(32), signal: new AbortController().signal });
  const scope = (chatId: string, temporary: Iterable<string> = []): ToolScope => ({ chatId, temporary: new Set(temporary) });
  const run = (chatId: string, tool: string, args: Record<string, unknown> = {}, temporary: Iterable<string> = []) =>
    registry.execute(tool, JSON.stringify(args), ctx(chatId), scope(chatId, temporary));
  const visible = (chatId: string, temporary: Iterable<string> = []) =>
    registry.visibleTools(scope(chatId, temporary)).map((t) => t.name);
  const storedActivations = async (chatId: string): Promise<Record<string, number> | undefined> => {
    try {
      const metadata = JSON.parse(await fs.readFile(join(app.config.memoryDir, chatId, 'metadata.json'), 'utf8')) as {
        activated_tools?: Record<string, number>;
      };
      return metadata.activated_tools;
    } catch {
      return undefined;
    }
  };

  it('Scenario: tool_search lists a configured but unconnected server as a stub with the mcp_prepare hint', async () => {
    const result = await run('chat-a', 'tool_search', { query: 'weather forecasts' });
    expect(result.model).toContain('## Search results: weather forecasts');
    expect(result.model).toContain('### Offline weather: Weather forecasts');
    expect(result.model).toContain('`mcp_prepare(server_name="offline")`');
    expect(result.model).not.toContain('activated');
  });

  it('Scenario: a blank query asks for keywords; no hit says so', async () => {
    expect((await run('chat-a', 'tool_search', { query: '  ' })).model).toBe('Please provide search keywords.');
    expect((await run('chat-a', 'tool_search', { query: 'zzqqxx' })).model).toBe(
      'No tools found for "zzqqxx". Try different keywords.',
    );
  });

  it('Scenario: mcp_prepare connects lazily and activates exactly that server’s tools', async () => {
    const result = await run('chat-a', 'mcp_prepare', { server_name: 'hello' });
    expect(result.model).toMatch(/^MCP server 'hello' is connected\. Activated \d+ tool\(s\): /);
    expect(result.model).toContain('mcp_hello_say_hello');
    const shown = visible('chat-a');
    expect(shown).toContain('mcp_hello_say_hello');
    // a server whose name starts with `hello_` is not matched by prefix (ownership is recorded, never inferred from the
    // name)
    expect(shown.some((name) => name.startsWith('mcp_hello_extra_'))).toBe(false);
    const stored = await storedActivations('chat-a');
    expect(Object.keys(stored ?? {})).toContain('mcp_hello_say_hello');
  });

  it('Scenario: mcp_prepare errors are tool errors', async () => {
    expect((await run('chat-a', 'mcp_prepare', { server_name: ' ' })).model).toBe('Error: server_name must not be empty.');
    expect((await run('chat-a', 'mcp_prepare', { server_name: 'nope' })).model).toMatch(/^Error: MCP server 'nope' is not configured/);
    const offline = await run('chat-a', 'mcp_prepare', { server_name: 'offline' });
    expect(offline.ok).toBe(false);
    expect(offline.model).toMatch(/^Error: Failed to connect MCP server 'offline': .+ Check its configuration\.$/);
  });

  it('Scenario: an activated tool runs and its use refreshes the LRU timestamp', async () => {
    const activations = app.app.get(McpActivations, { strict: false });
    const before = (await storedActivations('chat-a'))!['mcp_hello_say_hello']!;
    activations.now = () => before + 100;
    try {
      const result = await run('chat-a', 'mcp_hello_say_hello');
      expect(result).toMatchObject({ model: 'Hello, Cash', ok: true });
      await activations.flush();
      expect((await storedActivations('chat-a'))!['mcp_hello_say_hello']).toBe(before + 100);
    } finally {
      activations.now = () => Date.now() / 1000;
    }
  });

  it('Scenario: an mcp_ tool that is not activated in this chat is refused', async () => {
    const result = await run('chat-other', 'mcp_hello_say_hello');
    expect(result.model).toMatch(/^Tool 'mcp_hello_say_hello' is not activated yet/);
    expect(visible('chat-other')).not.toContain('mcp_hello_say_hello');
  });

  it('Scenario: tool_search activates live hits for this chat only', async () => {
    const result = await run('chat-b', 'tool_search', { query: 'say hello', limit: 3 });
    expect(result.model).toContain('- **mcp_hello_say_hello**: Say hello to Cash.');
    expect(result.model).toContain('tool(s) activated and callable in this chat:');
    expect(visible('chat-b')).toContain('mcp_hello_say_hello');
    expect((await run('chat-b', 'mcp_hello_say_hello')).model).toBe('Hello, Cash');
    expect(visible('chat-c')).not.toContain('mcp_hello_say_hello');
  });

  it('Scenario: the visible tool list is sorted deterministically (built-ins, then mcp_*)', () => {
    const first = visible('chat-a');
    expect(visible('chat-a')).toEqual(first);
    const split = first.findIndex((name) => name.startsWith('mcp_'));
    expect(first.slice(split).every((name) => name.startsWith('mcp_'))).toBe(true);
    expect(first.slice(0, split)).toEqual([...first.slice(0, split)].sort());
    expect(first).toContain('tool_search');
    expect(first).toContain('mcp_prepare');
    // the activated tools follow the meta mcp_ tools in the chat's activation order
    const activated = app.app.get(McpActivations, { strict: false }).activeTools('chat-a');
    expect(activated.length).toBeGreaterThan(0);
    expect(first.slice(first.length - activated.length)).toEqual(activated);
  });

  it('Scenario: activated mcp_ tools keep their activation order, so activating one appends it', async () => {
    const activations = app.app.get(McpActivations, { strict: false });
    const before = visible('chat-a');
    const activated = activations.activeTools('chat-a');
    // activating the first one again keeps its place: the visible list does not change
    await activations.activate('chat-a', [activated[0] as string]);
    expect(activations.activeTools('chat-a')).toEqual(activated);
    expect(visible('chat-a')).toEqual(before);
  });

  it('Scenario: at most 50 tools stay activated per chat (least recently used dropped)', async () => {
    const result = await run('chat-lru', 'mcp_prepare', { server_name: 'hello_extra' });
    expect(result.model).toContain('Activated 61 tool(s)');
    expect(result.model).toContain('at most 50 active tools');
    expect(Object.keys((await storedActivations('chat-lru')) ?? {})).toHaveLength(50);
  });

  it('Scenario: cached tools of a disconnected server are listed as requiring preparation', async () => {
    await request(app.httpUrl).post('/api/mcp/servers/hello_extra/disconnect').expect(200);
    const result = await run('chat-c', 'tool_search', { query: 'weather records', limit: 3 });
    expect(result.model).toMatch(/- \*\*\w+_weather_\d{5}\*\*: /);
    expect(result.model).toContain('(requires preparation: call `mcp_prepare(server_name="hello_extra")` before using it)');
    expect(result.model).not.toContain('activated and callable');
  });

  it('Scenario: selected connectors are visible for this turn only and never persisted', async () => {
    const temporary = await mcp.prepareTurn('chat-sel', ['remote', 'remote']);
    // de-duplicated selection: each of the server's tools once
    expect(temporary.size).toBe(mcp.serverToolNames('remote').length);
    expect([...temporary].every((name) => name.startsWith('mcp_remote_'))).toBe(true);
    expect(visible('chat-sel', temporary)).toContain('mcp_remote_say_hello');
    expect((await run('chat-sel', 'mcp_remote_say_hello', {}, temporary)).model).toBe('Hello, Cash');
    expect(visible('chat-sel')).not.toContain('mcp_remote_say_hello');
    expect(await storedActivations('chat-sel')).toBeUndefined();
  });

  it('Scenario: preparing a selected connector that cannot be connected rejects with a clear message', async () => {
    await expect(mcp.prepareSelectedConnectors(['offline'])).rejects.toThrow(/^Unable to prepare MCP offline: .+/);
    await expect(mcp.prepareSelectedConnectors(['nope'])).rejects.toThrow('Unable to prepare MCP nope: MCP server is not configured');
  });

  it('Scenario: updating a user server purges its activations and cache', async () => {
    await run('chat-d', 'mcp_prepare', { server_name: 'remote' });
    expect(Object.keys((await storedActivations('chat-d')) ?? {})).toContain('mcp_remote_say_hello');
    await request(app.httpUrl)
      .put('/api/mcp/servers/remote')
      .send({ display_name: 'Remote (edited)', url: sse.url, headers: { 'X-Api-Key': '********' } })
      .expect(200);
    expect(Object.keys((await storedActivations('chat-d')) ?? {})).not.toContain('mcp_remote_say_hello');
    await expect(fs.access(join(app.config.mcpCacheDir, 'remote.json'))).rejects.toThrow();
    expect((await request(app.httpUrl).get('/api/mcp/servers/remote/tools')).body.source).toBe('none');
  });

  it('Scenario: activations persist across a restart; the owning server reconnects for the turn', async () => {
    await app.app.get(McpActivations, { strict: false }).flush();
    await app.close();
    await startApp();
    expect(Object.keys((await storedActivations('chat-a')) ?? {})).toContain('mcp_hello_say_hello');
    expect(registry.has('mcp_hello_say_hello')).toBe(false);
    await mcp.prepareTurn('chat-a', []);
    expect(visible('chat-a')).toContain('mcp_hello_say_hello');
    expect((await run('chat-a', 'mcp_hello_say_hello')).model).toBe('Hello, Cash');
  });

  it('Scenario: disconnect purges the server’s tools from every chat, loaded or only on disk', async () => {
    // chat-b was activated before the restart and has not been loaded since
    expect(Object.keys((await storedActivations('chat-b')) ?? {})).toContain('mcp_hello_say_hello');
    await run('chat-e', 'mcp_prepare', { server_name: 'remote' });
    await request(app.httpUrl).post('/api/mcp/servers/hello/disconnect').expect(200);
    for (const chatId of ['chat-a', 'chat-b']) {
      const names = Object.keys((await storedActivations(chatId)) ?? {});
      expect(names.filter((name) => name.startsWith('mcp_hello_') && !name.startsWith('mcp_hello_extra_'))).toEqual([]);
    }
    // other servers' activations are untouched
    expect(Object.keys((await storedActivations('chat-e')) ?? {})).toContain('mcp_remote_say_hello');
    expect(visible('chat-a')).not.toContain('mcp_hello_say_hello');
  });
});
