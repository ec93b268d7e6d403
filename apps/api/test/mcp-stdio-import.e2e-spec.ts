/**
 * User stdio servers, import of client configurations and connections that last, against real servers:
 * @modelcontextprotocol/server-memory, server-filesystem and server-everything over stdio (user entries), the repo's
 * SSE test server (killed and restarted on its port) and server-everything over SSE (left idle).
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import request from 'supertest';
import type { McpImportResponse, McpServerRecord } from '@cashcode/contracts';
import { ToolRegistry, type ToolScope } from '../src/agent/tool-registry';
import type { ToolContext } from '../src/agent/agent-tool';
import { MCP_VALIDATION_MESSAGES as M } from '../src/mcp/mcp-validation';
import { McpConnections } from '../src/mcp/mcp-connections';
import { McpService } from '../src/mcp/mcp.service';
import {
  ensureMcpServersBuilt,
  EVERYTHING_JS,
  FILESYSTEM_JS,
  freePort,
  MEMORY_JS,
  startEverythingSse,
  startTestHttpServer,
  stdioEntry,
  writeCatalog,
  type RunningMcpServer,
} from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { allowToolsWithoutAsking } from './support/ws-client';

const ENV_SECRET = 'stdio-env-secret-4d7e1b90';

const ctx = (): ToolContext => ({ chatId: 'stdio-chat', turnId: 'b'.repeat(32), signal: new AbortController().signal });
const scope = (tools: string[]): ToolScope => ({ chatId: 'stdio-chat', temporary: new Set(tools) });

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('MCP user stdio servers and import (e2e)', () => {
  let app: TestApp;
  let registry: ToolRegistry;
  let workDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    workDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-stdio-'));
    await fs.writeFile(join(workDir, 'hello.txt'), 'hello from the filesystem server\n');
    const catalog = writeCatalog(join(workDir, 'catalog'), { builtin_stdio: stdioEntry() });
    app = await startTestApp({
      env: { CASHCODE_MCP_CATALOG: catalog, CASHCODE_API_KEY_FOR_TEST: 'cashcode-own-secret-value' },
    });
    registry = app.app.get(ToolRegistry, { strict: false });
    await allowToolsWithoutAsking(app.httpUrl);
  });

  afterAll(async () => {
    await app?.close();
    await fs.rm(workDir, { recursive: true, force: true });
  });

  const api = () => request(app.httpUrl);
  const call = (name: string, args: Record<string, unknown> = {}) => registry.execute(name, JSON.stringify(args), ctx(), scope([name]));

  it('Scenario: a user stdio entry (server-memory) is created with masked env, connects and its tool runs', async () => {
    const created = await api()
      .post('/api/mcp/servers')
      .send({ name: 'memory', type: 'stdio', command: 'node', args: [MEMORY_JS], env: { MEMORY_FILE_PATH: join(workDir, 'memory.jsonl'), API_TOKEN: ENV_SECRET } })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'memory',
      display_name: 'memory',
      type: 'stdio',
      url: '',
      command: 'node',
      args: [MEMORY_JS],
      env: { API_TOKEN: '********', MEMORY_FILE_PATH: '********' },
      cwd: '',
      builtin: false,
      mutable: true,
    });
    const file = join(app.dataDir, 'mcp', 'servers.json');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await fs.readFile(file, 'utf8')).memory).toMatchObject({ type: 'stdio', command: 'node', env: { API_TOKEN: ENV_SECRET } });
    const listed = (await api().get('/api/mcp/servers').expect(200)).body.servers as McpServerRecord[];
    expect(JSON.stringify(listed)).not.toContain(ENV_SECRET);

    const record = (await api().post('/api/mcp/servers/memory/connect').expect(200)).body as McpServerRecord;
    expect(record).toMatchObject({ status: 'connected', connected: true });
    expect(record.tool_count).toBeGreaterThanOrEqual(5);
    const createdEntities = await call('mcp_memory_create_entities', {
      entities: [{ name: 'Cash', entityType: 'agent', observations: ['runs MCP servers'] }],
    });
    expect(createdEntities.ok).not.toBe(false);
    const graph = await call('mcp_memory_read_graph');
    expect(graph.model).toContain('runs MCP servers');
    const logs = await fs.readdir(join(app.dataDir, 'logs'));
    for (const log of logs) expect(await fs.readFile(join(app.dataDir, 'logs', log), 'utf8')).not.toContain(ENV_SECRET);
  });

  it('Scenario: server-filesystem and server-everything run as user stdio entries', async () => {
    await api().post('/api/mcp/servers').send({ name: 'files', command: 'node', args: [FILESYSTEM_JS, workDir] }).expect(201);
    await api().post('/api/mcp/servers').send({ name: 'everything', type: 'stdio', command: 'node', args: [EVERYTHING_JS, 'stdio'] }).expect(201);
    expect((await api().post('/api/mcp/servers/files/connect').expect(200)).body).toMatchObject({ status: 'connected' });
    expect((await api().post('/api/mcp/servers/everything/connect').expect(200)).body).toMatchObject({ status: 'connected' });
    // CashCode offers the roots capability with the agent workspace as the single root, and server-filesystem lets
    // the client's roots replace the directories on its command line: it serves the workspace
    await fs.writeFile(join(app.config.workspaceDir, 'hello-roots.txt'), 'in the workspace\n');
    const listing = await call('mcp_files_list_directory', { path: app.config.workspaceDir });
    expect(listing.model).toContain('hello-roots.txt');
    const outside = await call('mcp_files_list_directory', { path: workDir });
    expect(outside.model).toContain('Access denied');
    const echo = await call('mcp_everything_echo', { message: 'stdio user entry' });
    expect(echo.model).toContain('stdio user entry');
  });

  it("Scenario: a stdio child sees its configured env and the safe baseline, not CashCode's variables", async () => {
    process.env['CASHCODE_SECRET_OF_THE_SERVER'] = 'must-not-leak-1234';
    try {
      const out = join(workDir, 'child-env.json');
      const script = `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env))`;
      await api().post('/api/mcp/servers').send({ name: 'envdump', command: 'node', args: ['-e', script], env: { ONLY_MINE: 'yes-1234' } }).expect(201);
      const record = (await api().post('/api/mcp/servers/envdump/connect').expect(200)).body as McpServerRecord;
      expect(record.status).toBe('error');
      const env = JSON.parse(await fs.readFile(out, 'utf8')) as Record<string, string>;
      expect(env['ONLY_MINE']).toBe('yes-1234');
      expect(env['PATH']).toBe(process.env['PATH']);
      expect(Object.keys(env).filter((name) => name.startsWith('CASHCODE_'))).toEqual([]);
      const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TMP', 'TEMP', 'TZ', 'ONLY_MINE']);
      // node itself may add nothing; anything else came from CashCode's environment
      expect(Object.keys(env).filter((name) => !allowed.has(name))).toEqual([]);
    } finally {
      delete process.env['CASHCODE_SECRET_OF_THE_SERVER'];
    }
  });

  it('Scenario: a masked env value is kept while the command is unchanged and refused when it changes', async () => {
    const base = { name: 'bound', command: 'node', args: [MEMORY_JS], env: { TOKEN: ENV_SECRET } };
    await api().post('/api/mcp/servers').send(base).expect(201);
    const kept = await api()
      .put('/api/mcp/servers/bound')
      .send({ command: 'node', args: [MEMORY_JS], env: { TOKEN: '********' }, display_name: 'Bound' })
      .expect(200);
    expect(kept.body.env).toEqual({ TOKEN: '********' });
    const file = JSON.parse(await fs.readFile(join(app.dataDir, 'mcp', 'servers.json'), 'utf8'));
    expect(file.bound.env.TOKEN).toBe(ENV_SECRET);
    const moved = await api()
      .put('/api/mcp/servers/bound')
      .send({ command: 'node', args: [MEMORY_JS, '--other'], env: { TOKEN: '********' } })
      .expect(422);
    expect(moved.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(moved.body.errors).toEqual([{ field: 'env.TOKEN', message: M.envCommandMoved('TOKEN') }]);
    const otherCommand = await api().put('/api/mcp/servers/bound').send({ command: 'python3', args: [MEMORY_JS], env: { TOKEN: '********' } }).expect(422);
    expect(otherCommand.body.errors[0].field).toBe('env.TOKEN');
  });

  it('Scenario: invalid stdio fields are 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ command: '   ' , type: 'stdio' }, 'command', M.command],
      [{ command: 'no\u0000de' }, 'command', M.command],
      [{ command: 'node', args: ['ok', 3] }, 'args', M.args],
      [{ command: 'node', env: { '1BAD': 'x' } }, 'env.1BAD', M.envName('1BAD')],
      [{ command: 'node', cwd: 'relative/dir' }, 'cwd', M.cwd],
      [{ command: 'node', cwd: join(workDir, 'missing') }, 'cwd', M.cwd],
    ];
    for (const [body, field, message] of cases) {
      const res = await api().post('/api/mcp/servers').send({ name: 'invalid', ...body });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field, message }]);
    }
  });

  it('Scenario: a Claude Desktop config is imported', async () => {
    const res = await api()
      .post('/api/mcp/servers/import')
      .send({ config: { mcpServers: { Desktop_Memory: { command: 'node', args: [MEMORY_JS], env: { MEMORY_FILE_PATH: join(workDir, 'm2.jsonl') } } } } })
      .expect(200);
    const body = res.body as McpImportResponse;
    expect(body.skipped).toEqual([]);
    expect(body.created).toHaveLength(1);
    expect(body.created[0]).toMatchObject({ name: 'desktop_memory', display_name: 'Desktop_Memory', type: 'stdio', env: { MEMORY_FILE_PATH: '********' } });
    expect((await api().post('/api/mcp/servers/desktop_memory/connect').expect(200)).body).toMatchObject({ status: 'connected' });
  });

  it('Scenario: a Claude Code config with stdio, sse and http entries is imported and conflicts are skipped', async () => {
    const res = await api()
      .post('/api/mcp/servers/import')
      .send({
        config: {
          mcpServers: {
            'code-stdio': { type: 'stdio', command: 'node', args: [EVERYTHING_JS, 'stdio'] },
            'code-sse': { type: 'sse', url: 'http://127.0.0.1:9/sse', headers: { Authorization: 'Bearer code-sse-secret' } },
            'code-http': { type: 'http', url: 'http://127.0.0.1:9/mcp' },
            memory: { command: 'node', args: [MEMORY_JS] },
            socket: { type: 'websocket', url: 'ws://127.0.0.1:9' },
            broken: { type: 'stdio', command: '' },
          },
        },
      })
      .expect(200);
    const body = res.body as McpImportResponse;
    expect(body.created.map((r) => [r.name, r.type])).toEqual([
      ['code-stdio', 'stdio'],
      ['code-sse', 'sse'],
      ['code-http', 'streamable_http'],
    ]);
    expect(body.created[1]!.headers).toEqual({ Authorization: '********' });
    expect(body.skipped).toEqual([
      { name: 'socket', reason: 'unsupported_type', detail: "unsupported transport type 'websocket'" },
      { name: 'memory', reason: 'conflict', detail: 'MCP server already exists: memory' },
      { name: 'broken', reason: 'invalid', detail: `command: ${M.command}` },
    ]);
    const bad = await api().post('/api/mcp/servers/import').send({ config: { other: {} } }).expect(422);
    expect(bad.body.errors[0].field).toBe('config');
    // documented in OpenAPI
    const doc = (await api().get('/api/docs-json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/api/mcp/servers/import'] ?? {})).toEqual(['post']);
  });

  it('Scenario: a VS Code config with input placeholders reports them as skipped', async () => {
    const res = await api()
      .post('/api/mcp/servers/import')
      .send({
        config: {
          inputs: [{ type: 'promptString', id: 'api-key', description: 'API key', password: true }],
          servers: {
            vscode_keyed: { type: 'stdio', command: 'node', args: [MEMORY_JS], env: { API_KEY: '${input:api-key}' } },
            vscode_plain: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
          },
        },
      })
      .expect(200);
    const body = res.body as McpImportResponse;
    expect(body.created.map((r) => r.name)).toEqual(['vscode_plain']);
    expect(body.skipped).toHaveLength(1);
    expect(body.skipped[0]).toMatchObject({ name: 'vscode_keyed', reason: 'input_placeholder' });
    expect(body.skipped[0]!.detail).toContain('env.API_KEY');
  });
});

describe('MCP catalog files (e2e)', () => {
  it('Scenario: CASHCODE_MCP_CATALOG with a leading + keeps the shipped catalog and adds the listed files', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-catalogs-'));
    const a = writeCatalog(join(dir, 'a'), { extra_a: stdioEntry(), shared: { url: 'http://127.0.0.1:9/sse', display_name: 'From A' } });
    const b = writeCatalog(join(dir, 'b'), { extra_b: stdioEntry(), shared: { url: 'http://127.0.0.1:9/sse', display_name: 'From B' } });
    const shipped = Object.keys(JSON.parse(await fs.readFile(join(__dirname, '..', '..', '..', 'mcp_servers', 'mcp_config.json'), 'utf8')));
    let app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: `+${a}${delimiter}${b}` } });
    try {
      const servers = (await request(app.httpUrl).get('/api/mcp/servers').expect(200)).body.servers as McpServerRecord[];
      const names = servers.map((s) => s.name);
      for (const name of [...shipped, 'extra_a', 'extra_b', 'shared']) expect(names).toContain(name);
      expect(servers.find((s) => s.name === 'shared')!.display_name).toBe('From B');
    } finally {
      await app.close();
    }
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: `${a}${delimiter}${b}` } });
    try {
      const names = ((await request(app.httpUrl).get('/api/mcp/servers').expect(200)).body.servers as McpServerRecord[]).map((s) => s.name);
      expect(names).toEqual(['extra_a', 'extra_b', 'shared']);
    } finally {
      await app.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP connections that last (e2e)', () => {
  it('Scenario: an SSE connection idle for ten seconds still answers a tool call', async () => {
    const everything: RunningMcpServer = await startEverythingSse();
    const app = await startTestApp();
    try {
      await allowToolsWithoutAsking(app.httpUrl);
      await request(app.httpUrl).post('/api/mcp/servers').send({ name: 'idle', url: everything.url }).expect(201);
      expect((await request(app.httpUrl).post('/api/mcp/servers/idle/connect').expect(200)).body).toMatchObject({ status: 'connected' });
      await new Promise((r) => setTimeout(r, 10_000));
      const registry = app.app.get(ToolRegistry, { strict: false });
      const echo = await registry.execute('mcp_idle_echo', JSON.stringify({ message: 'still here' }), ctx(), scope(['mcp_idle_echo']));
      expect(echo.model).toContain('still here');
      expect((await request(app.httpUrl).get('/api/mcp/servers').expect(200)).body.servers[0]).toMatchObject({ status: 'connected' });
    } finally {
      await app.close();
      await everything.stop();
    }
  }, 40_000);

  const restartOnce = async (kind: 'sse' | 'http') => {
    const port = await freePort();
    let server = await startTestHttpServer(kind, { port });
    const app = await startTestApp();
    try {
      await allowToolsWithoutAsking(app.httpUrl);
      await request(app.httpUrl).post('/api/mcp/servers').send({ name: 'flaky', type: kind, url: server.url }).expect(201);
      expect((await request(app.httpUrl).post('/api/mcp/servers/flaky/connect').expect(200)).body).toMatchObject({ status: 'connected' });
      const registry = app.app.get(ToolRegistry, { strict: false });
      const mcp = app.app.get(McpService, { strict: false });
      server.kill();
      const reconnecting = await waitFor(async () => {
        const record = mcp.list().find((s) => s.name === 'flaky')!;
        return record.status === 'reconnecting' ? record : undefined;
      }, 10_000, 'reconnecting');
      expect(reconnecting.reconnect_attempt).toBeGreaterThanOrEqual(1);
      expect(Date.parse(reconnecting.next_retry_at!)).toBeGreaterThan(Date.now() - 60_000);
      expect(registry.has('mcp_flaky_say_hello')).toBe(false);
      server = await startTestHttpServer(kind, { port });
      await waitFor(async () => (mcp.list().find((s) => s.name === 'flaky')!.status === 'connected' ? true : undefined), 40_000, 'connected');
      const hello = await registry.execute('mcp_flaky_say_hello', '{}', ctx(), scope(['mcp_flaky_say_hello']));
      expect(hello).toMatchObject({ model: 'Hello, Cash', ok: true });
    } finally {
      await app.close();
      await server.stop();
    }
  };

  it('Scenario: a restarted network server (SSE, Streamable HTTP) is reconnected with backoff', async () => {
    await restartOnce('sse');
    await restartOnce('http');
  }, 120_000);

  it('Scenario: servers left connected are reconnected after a restart of CashCode', async () => {
    const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-restart-'));
    const catalog = writeCatalog(join(dataDir, 'catalog'), {});
    const env = { CASHCODE_MCP_CATALOG: catalog };
    let app = await startTestApp({ dataDir, env });
    try {
      await request(app.httpUrl).post('/api/mcp/servers').send({ name: 'kept', command: 'node', args: [EVERYTHING_JS, 'stdio'] }).expect(201);
      await request(app.httpUrl).post('/api/mcp/servers').send({ name: 'dropped', command: 'node', args: [EVERYTHING_JS, 'stdio'] }).expect(201);
      await request(app.httpUrl).post('/api/mcp/servers/kept/connect').expect(200);
      await request(app.httpUrl).post('/api/mcp/servers/dropped/connect').expect(200);
      await request(app.httpUrl).post('/api/mcp/servers/dropped/disconnect').expect(200);
      await app.close();
      const state = join(dataDir, 'mcp', 'connections.json');
      expect((await fs.stat(state)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await fs.readFile(state, 'utf8'))).toEqual({ connected: ['kept'] });

      app = await startTestApp({ dataDir, env });
      await request(app.httpUrl).get('/api/health').expect(200);
      const mcp = app.app.get(McpService, { strict: false });
      await waitFor(async () => (mcp.list().find((s) => s.name === 'kept')!.status === 'connected' ? true : undefined), 30_000, 'kept connected');
      await app.app.get(McpConnections, { strict: false }).restored;
      expect(mcp.list().find((s) => s.name === 'dropped')!.status).toBe('disconnected');
      expect(app.app.get(ToolRegistry, { strict: false }).has('mcp_kept_echo')).toBe(true);
    } finally {
      await app.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
