/**
 * MCP connections against real servers: the repo's stdio, SSE and Streamable HTTP test servers and
 * @modelcontextprotocol/server-everything (stdio and SSE). Tools are called through the agent's ToolRegistry.
 */
import { promises as fs } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { McpServerRecord, McpServerToolsResponse } from '@cashcode/contracts';
import { ToolRegistry, type ToolScope } from '../src/agent/tool-registry';
import type { ToolContext } from '../src/agent/agent-tool';
import { McpServers } from '../src/mcp/mcp-servers';
import {
  ensureMcpServersBuilt,
  everythingStdioEntry,
  isAlive,
  startEverythingSse,
  startTestHttpServer,
  stdioEntry,
  writeCatalog,
  type RunningMcpServer,
} from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';

const SECRET = 'sse-header-secret-7f3a9c';
const HTTP_SECRET = 'http-header-secret-52b1e0';

describe('MCP connections (e2e)', () => {
  let app: TestApp;
  let sse: RunningMcpServer;
  let http: RunningMcpServer;
  let everythingSse: RunningMcpServer;
  let registry: ToolRegistry;
  let catalogDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    [sse, http, everythingSse] = await Promise.all([
      startTestHttpServer('sse', { requireHeaders: [`X-Api-Key=${SECRET}`] }),
      startTestHttpServer('http', { requireHeaders: [`Authorization=Bearer ${HTTP_SECRET}`] }),
      startEverythingSse(),
    ]);
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-catalog-'));
    const catalog = writeCatalog(catalogDir, {
      stdio: stdioEntry(),
      everything: everythingStdioEntry(),
      broken: { type: 'stdio', command: 'cashcode-no-such-command-xyz', args: [] },
    });
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog, CASHCODE_MCP_TOOL_TIMEOUT_MS: '1000' } });
    registry = app.app.get(ToolRegistry, { strict: false });
    const create = async (body: Record<string, unknown>) =>
      expect((await request(app.httpUrl).post('/api/mcp/servers').send(body)).status).toBe(201);
    await create({ name: 'remote_sse', display_name: 'Remote SSE', url: sse.url, headers: { 'X-Api-Key': SECRET } });
    await create({
      name: 'remote_http',
      type: 'streamable_http',
      display_name: 'Remote HTTP',
      url: http.url,
      headers: { Authorization: `Bearer ${HTTP_SECRET}` },
    });
    await create({ name: 'everything_sse', display_name: 'Everything SSE', url: everythingSse.url });
  });

  afterAll(async () => {
    await app?.close();
    await Promise.all([sse?.stop(), http?.stop(), everythingSse?.stop()]);
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  const ctx = (chatId = 'conn-chat'): ToolContext => ({ chatId, turnId: 'a'.repeat(32), signal: new AbortController().signal });
  const scope = (tools: string[], chatId = 'conn-chat'): ToolScope => ({ chatId, temporary: new Set(tools) });
  const connect = async (name: string): Promise<McpServerRecord> => {
    const res = await request(app.httpUrl).post(`/api/mcp/servers/${name}/connect`);
    expect(res.status).toBe(200);
    return res.body as McpServerRecord;
  };
  const tools = async (name: string): Promise<McpServerToolsResponse> =>
    (await request(app.httpUrl).get(`/api/mcp/servers/${name}/tools`)).body as McpServerToolsResponse;
  const call = (name: string, args: Record<string, unknown> = {}) => registry.execute(name, JSON.stringify(args), ctx(), scope([name]));

  it('Scenario: a stdio server connects, lists its tools live and answers say_hello', async () => {
    const record = await connect('stdio');
    expect(record).toMatchObject({ status: 'connected', connected: true, status_error: null, type: 'stdio', url: '' });
    expect(record.tool_count).toBeGreaterThanOrEqual(7);
    const listed = await tools('stdio');
    expect(listed.source).toBe('live');
    expect(listed).not.toHaveProperty('connected');
    expect(listed.tools.map((t) => t.name)).toEqual([...listed.tools.map((t) => t.name)].sort());
    expect(listed.tools.find((t) => t.original_name === 'say_hello')).toMatchObject({
      name: 'mcp_stdio_say_hello',
      source: 'live',
      callable: true,
    });
    const hello = await call('mcp_stdio_say_hello');
    expect(hello).toMatchObject({ model: 'Hello, Cash', ok: true });
  });

  it('Scenario: connecting twice performs one handshake and stays connected', async () => {
    const mcp = app.app.get(McpServers, { strict: false });
    const [a, b] = await Promise.all([mcp.connect('stdio'), mcp.connect('stdio')]);
    expect(a.status).toBe('connected');
    expect(b.tool_count).toBe(a.tool_count);
  });

  it('Scenario: wrapper schemas are normalised without touching property schemas', () => {
    const shout = registry.get('mcp_stdio_shout');
    expect(shout?.parameters).toMatchObject({ type: 'object', required: ['text'] });
    const props = shout!.parameters.properties as Record<string, Record<string, unknown>>;
    expect(props['text']).toEqual({ type: 'string', description: 'text to shout' });
    // an anyOf integer/null parameter keeps its anyOf (no injected type "object")
    expect(props['times']?.['type']).toBeUndefined();
    expect(props['times']?.['anyOf']).toBeDefined();
    expect(shout!.parameters['$schema']).toBeUndefined();
  });

  it('Scenario: results carry text plus structured content; isError results are failures', async () => {
    const shout = await call('mcp_stdio_shout', { text: 'cash' });
    expect(shout.ok).toBe(true);
    expect(shout.model).toContain('CASH');
    expect(shout.model).toContain('Structured content: {"upper":"CASH","length":4}');
    const fail = await call('mcp_stdio_fail', { message: 'nope' });
    expect(fail.ok).toBe(false);
    expect(fail.model).toContain("MCP tool 'mcp_stdio_fail' reported an error: nope");
  });

  it('Scenario: a call that outlives the tool timeout returns a timeout error', async () => {
    const slow = await call('mcp_stdio_sleep_ms', { ms: 3000 });
    expect(slow.ok).toBe(false);
    expect(slow.model).toContain("(MCP tool 'mcp_stdio_sleep_ms' timed out after 1s)");
  });

  it('Scenario: progress notifications reset the tool timeout', async () => {
    // 3 steps × 450 ms ≈ 1.35 s in total, more than the 1 s timeout, but never 1 s without progress
    const result = await call('mcp_stdio_progress_sleep', { steps: 3, step_ms: 450 });
    expect(result).toMatchObject({ model: 'done after 3 steps', ok: true });
  });

  it('Scenario: tools/list_changed refreshes the wrappers', async () => {
    const changed = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (registry.has('mcp_stdio_late_tool')) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    const added = await call('mcp_stdio_add_tool', { name: 'late_tool' });
    expect(added.model).toBe('added late_tool');
    await changed;
    expect((await call('mcp_stdio_late_tool')).model).toBe('late_tool says hi');
    expect((await tools('stdio')).tools.map((t) => t.original_name)).toContain('late_tool');
  });

  it('Scenario: a server killed mid-call → status error, a clear tool error, and connect works again', async () => {
    const pid = Number((await call('mcp_stdio_get_pid')).model);
    expect(isAlive(pid)).toBe(true);
    const pending = call('mcp_stdio_sleep_ms', { ms: 1000 });
    process.kill(pid, 'SIGKILL');
    const result = await pending;
    expect(result.ok).toBe(false);
    expect(result.model).toContain("(MCP tool 'mcp_stdio_sleep_ms' failed: the MCP server 'stdio' closed the connection");
    const list = (await request(app.httpUrl).get('/api/mcp/servers')).body as { servers: McpServerRecord[] };
    const stdio = list.servers.find((s) => s.name === 'stdio')!;
    expect(stdio).toMatchObject({ status: 'error', connected: false, tool_count: 0 });
    expect(stdio.status_error).toMatch(/closed the connection/);
    expect(registry.has('mcp_stdio_say_hello')).toBe(false);
    expect((await connect('stdio')).status).toBe('connected');
    expect((await call('mcp_stdio_say_hello')).model).toBe('Hello, Cash');
  });

  it('Scenario: disconnect kills the stdio server process; tools fall back to the cache', async () => {
    await connect('stdio');
    const pid = Number((await call('mcp_stdio_get_pid')).model);
    const res = await request(app.httpUrl).post('/api/mcp/servers/stdio/disconnect');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'disconnected', connected: false, tool_count: 0 });
    expect(isAlive(pid)).toBe(false);
    const cached = await tools('stdio');
    expect(cached.source).toBe('cache');
    expect(cached.tools.every((t) => t.source === 'cache' && !t.callable)).toBe(true);
    expect(cached.tools.map((t) => t.original_name)).toContain('say_hello');
    const file = JSON.parse(await fs.readFile(join(app.config.mcpCacheDir, 'stdio.json'), 'utf8')) as Record<string, unknown>;
    expect(file).toMatchObject({ resources: [], prompts: [] });
    expect(file['transport_fingerprint']).toMatch(/^[0-9a-f]{16}$/);
    const call2 = await registry.execute('mcp_stdio_say_hello', '{}', ctx(), scope([]));
    expect(call2.model).toContain("Tool 'mcp_stdio_say_hello' not found");
  });

  it('Scenario: tools of a never-connected server have source none', async () => {
    expect(await tools('everything_sse')).toMatchObject({ source: 'none', tools: [], tool_count: 0, status: 'disconnected' });
  });

  it('Scenario: an SSE server with a required secret header connects and answers', async () => {
    const record = await connect('remote_sse');
    expect(record).toMatchObject({ status: 'connected', headers: { 'X-Api-Key': '********' } });
    expect((await call('mcp_remote_sse_say_hello')).model).toBe('Hello, Cash');
  });

  it('Scenario: a Streamable HTTP server connects and answers', async () => {
    expect((await connect('remote_http')).status).toBe('connected');
    expect((await call('mcp_remote_http_say_hello')).model).toBe('Hello, Cash');
  });

  it('Scenario: the third-party server-everything echo tool works over stdio and SSE', async () => {
    expect((await connect('everything')).status).toBe('connected');
    expect((await call('mcp_everything_echo', { message: 'hi there' })).model).toBe('Echo: hi there');
    expect((await connect('everything_sse')).status).toBe('connected');
    expect((await call('mcp_everything_sse_echo', { message: 'over sse' })).model).toBe('Echo: over sse');
  });

  it('Scenario: a stdio server that cannot start → 200 with status error and a redacted message', async () => {
    const record = await connect('broken');
    expect(record.status).toBe('error');
    expect(record.connected).toBe(false);
    expect(record.status_error).toMatch(/ENOENT/);
    expect(record.status_error!.length).toBeLessThanOrEqual(500);
  });

  it('Scenario: an unreachable SSE server → status error, and the secret never appears', async () => {
    await sse.stop();
    await request(app.httpUrl).post('/api/mcp/servers/remote_sse/disconnect').expect(200);
    const record = await connect('remote_sse');
    expect(record.status).toBe('error');
    expect(record.status_error).toBeTruthy();
    expect(JSON.stringify(record)).not.toContain(SECRET);
  });

  it('Scenario: secret headers are not sent across origins on a redirect', async () => {
    const seen: Array<string | undefined> = [];
    const target: Server = createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetPort = (target.address() as AddressInfo).port;
    const redirector: Server = createServer((_req, res) => {
      res.writeHead(307, { location: `http://localhost:${targetPort}/sse` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const redirectPort = (redirector.address() as AddressInfo).port;
    try {
      await request(app.httpUrl)
        .post('/api/mcp/servers')
        .send({ name: 'redirecting', display_name: 'Redirecting', url: `http://127.0.0.1:${redirectPort}/sse`, headers: { 'X-Api-Key': SECRET } })
        .expect(201);
      const record = await connect('redirecting');
      expect(record.status).toBe('error');
      expect(seen).toEqual([]);
      expect(JSON.stringify(record)).not.toContain(SECRET);
    } finally {
      for (const server of [target, redirector]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
  });

  it('Scenario: header secrets appear in no response and no log line', async () => {
    const list = await request(app.httpUrl).get('/api/mcp/servers');
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(HTTP_SECRET);
    const logs = await fs.readdir(app.config.logDir);
    let all = '';
    for (const file of logs) all += await fs.readFile(join(app.config.logDir, file), 'utf8');
    expect(all).toContain('mcp.server.connected');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(HTTP_SECRET);
    // the user catalog keeps them (0600)
    const stat = await fs.stat(app.config.mcpUserCatalogPath);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')).toContain(SECRET);
  });
});
