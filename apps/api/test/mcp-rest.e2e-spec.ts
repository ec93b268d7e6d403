/**
 * MCP marketplace REST: every validation rule in order, every status code, the user catalog file, masked
 * headers, and the startup errors of a malformed user catalog. No server is connected here.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { McpServerRecord } from '@cashcode/contracts';
import { MCP_VALIDATION_MESSAGES as M } from '../src/mcp/mcp-validation';
import { stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { SinkServer } from './support/sink-server';
import { startTestApp, type TestApp } from './support/test-app';

const SECRET = 'rest-secret-value-91c2';

describe('MCP REST (e2e)', () => {
  let app: TestApp;
  let catalogDir: string;
  let catalog: string;

  beforeAll(async () => {
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-rest-'));
    catalog = writeCatalog(catalogDir, {
      zeta_builtin: { url: 'http://127.0.0.1:9/sse', display_name: 'Zeta', headers: { 'X-Builtin': 'builtin-secret-1234' } },
      alpha_stdio: stdioEntry(),
    });
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
  });

  afterAll(async () => {
    await app?.close();
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  const api = () => request(app.httpUrl);
  const valid = (overrides: Record<string, unknown> = {}) => ({
    name: 'weather',
    display_name: 'Weather',
    url: 'http://127.0.0.1:8090/sse',
    ...overrides,
  });

  async function expect422(method: 'post' | 'put', path: string, body: unknown, detail: string, field?: string) {
    const res = await api()[method](path).send(body as object);
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toBe(detail);
    if (field) expect(res.body.errors).toEqual([{ field, message: detail }]);
    return res;
  }

  describe('list', () => {
    it('Scenario: built-in servers are listed read-only, sorted by name, with masked headers', async () => {
      const res = await api().get('/api/mcp/servers').expect(200);
      const servers = res.body.servers as McpServerRecord[];
      expect(servers.map((s) => s.name)).toEqual(['alpha_stdio', 'zeta_builtin']);
      expect(servers[0]).toEqual({
        name: 'alpha_stdio',
        display_name: 'Test stdio MCP',
        description: 'Test server over stdio',
        type: 'stdio',
        url: '',
        headers: {},
        builtin: true,
        mutable: false,
        status: 'disconnected',
        connected: false,
        status_error: null,
        tool_count: 0,
      });
      // type inferred from a URL ending in /sse; display name and headers as configured, value masked
      expect(servers[1]).toMatchObject({ type: 'sse', display_name: 'Zeta', headers: { 'X-Builtin': '********' } });
      expect(JSON.stringify(res.body)).not.toContain('builtin-secret-1234');
    });
  });

  describe('create', () => {
    it('Scenario: a valid entry is created (201), trimmed, disconnected, headers masked, merged into the list', async () => {
      const res = await api()
        .post('/api/mcp/servers')
        .send(valid({ name: '  files ', display_name: '  Files ', description: ' Local files ', headers: { Authorization: `Bearer ${SECRET}` } }))
        .expect(201);
      expect(res.body).toEqual({
        name: 'files',
        display_name: 'Files',
        description: 'Local files',
        type: 'sse',
        url: 'http://127.0.0.1:8090/sse',
        headers: { Authorization: '********' },
        builtin: false,
        mutable: true,
        status: 'disconnected',
        connected: false,
        status_error: null,
        tool_count: 0,
      });
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      const list = (await api().get('/api/mcp/servers')).body.servers as McpServerRecord[];
      expect(list.map((s) => s.name)).toEqual(['alpha_stdio', 'files', 'zeta_builtin']);
    });

    it('Scenario: the user catalog is written sorted, 0600, with real header values and a trailing newline', async () => {
      await api()
        .post('/api/mcp/servers')
        .send(valid({ name: 'aardvark', type: 'streamable_http', url: 'https://example.com/mcp' }))
        .expect(201);
      const text = await fs.readFile(app.config.mcpUserCatalogPath, 'utf8');
      expect(text.endsWith('}\n')).toBe(true);
      const parsed = JSON.parse(text) as Record<string, Record<string, unknown>>;
      expect(Object.keys(parsed)).toEqual(['aardvark', 'files']);
      expect(parsed['aardvark']).toEqual({
        type: 'streamable_http',
        display_name: 'Weather',
        description: '',
        url: 'https://example.com/mcp',
      });
      expect(parsed['files']!['headers']).toEqual({ Authorization: `Bearer ${SECRET}` });
      expect((await fs.stat(app.config.mcpUserCatalogPath)).mode & 0o777).toBe(0o600);
    });

    it('Scenario: a name taken by a built-in or a user server → 409', async () => {
      const builtin = await api().post('/api/mcp/servers').send(valid({ name: 'zeta_builtin' })).expect(409);
      expect(builtin.body.detail).toBe('MCP server already exists: zeta_builtin');
      const user = await api().post('/api/mcp/servers').send(valid({ name: 'files' })).expect(409);
      expect(user.body.detail).toBe('MCP server already exists: files');
    });

    it.each([
      ['missing name', { name: undefined }, M.name, 'name'],
      ['upper case name', { name: 'Weather' }, M.name, 'name'],
      ['name with a dot', { name: 'a.b' }, M.name, 'name'],
      ['name starting with a hyphen', { name: '-a' }, M.name, 'name'],
      ['name of 65 chars', { name: 'a'.repeat(65) }, M.name, 'name'],
      ['stdio type without a command', { type: 'stdio' }, M.command, 'command'],
      ['unknown type', { type: 'websocket' }, M.type, 'type'],
      ['blank display name', { display_name: '   ' }, M.displayName, 'display_name'],
      ['display name of 101 chars', { display_name: 'x'.repeat(101) }, M.displayName, 'display_name'],
      ['description of 1001 chars', { description: 'd'.repeat(1001) }, M.description, 'description'],
      ['description not a string', { description: 5 }, M.description, 'description'],
      ['missing url', { url: undefined }, M.urlLength, 'url'],
      ['blank url', { url: '  ' }, M.urlLength, 'url'],
      ['url of 2049 chars', { url: `http://a.b/${'x'.repeat(2038)}` }, M.urlLength, 'url'],
      ['ftp url', { url: 'ftp://example.com/sse' }, M.urlAbsolute, 'url'],
      ['url without //', { url: 'http:example.com' }, M.urlAbsolute, 'url'],
      ['relative url', { url: '/sse' }, M.urlAbsolute, 'url'],
      ['url with credentials', { url: 'http://user:pw@example.com/sse' }, M.urlCredentials, 'url'],
      ['headers as a list', { headers: ['a'] }, M.headersObject, 'headers'],
      ['headers as a string', { headers: 'a' }, M.headersObject, 'headers'],
      [
        '33 headers',
        { headers: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`X-H${i}`, 'v'])) },
        M.headersCount,
        'headers',
      ],
      ['header name with a space', { headers: { 'X Bad': 'v' } }, M.headerName('X Bad'), 'headers.X Bad'],
      ['header name with a colon', { headers: { 'X:y': 'v' } }, M.headerName('X:y'), 'headers.X:y'],
      ['header name of 129 chars', { headers: { ['h'.repeat(129)]: 'v' } }, M.headerName('h'.repeat(129)), undefined],
      ['duplicate header names', { headers: { 'X-A': '1', 'x-a': '2' } }, M.headerDuplicate('x-a'), 'headers.x-a'],
      ['header value not a string', { headers: { 'X-A': 5 } }, M.headerString('X-A'), 'headers.X-A'],
      ['masked header value on create', { headers: { 'X-A': '********' } }, M.headerMasked('X-A'), 'headers.X-A'],
      ['empty header value', { headers: { 'X-A': '' } }, M.headerLength('X-A'), 'headers.X-A'],
      ['header value of 4097 chars', { headers: { 'X-A': 'v'.repeat(4097) } }, M.headerLength('X-A'), 'headers.X-A'],
      ['header value with a newline', { headers: { 'X-A': 'a\r\nInjected: 1' } }, M.headerNewline('X-A'), 'headers.X-A'],
    ])('Scenario: create with %s → 422 with the rule message', async (_label, overrides, detail, field) => {
      await expect422('post', '/api/mcp/servers', valid({ name: 'weather', ...overrides }), detail, field);
    });

    it('Scenario: rules apply in order (name before type before url)', async () => {
      await expect422('post', '/api/mcp/servers', { name: 'BAD', type: 'stdio', url: 'ftp://x' }, M.name, 'name');
      await expect422('post', '/api/mcp/servers', { name: 'ok', type: 'ws', url: 'ftp://x' }, M.type, 'type');
    });

    it('Scenario: unknown fields → 422', async () => {
      const res = await api().post('/api/mcp/servers').send(valid({ command: 'rm -rf /' })).expect(422);
      expect(res.body.detail).toMatch(/command/);
    });

    it('Scenario: a body that is not JSON → 400 problem', async () => {
      const res = await api().post('/api/mcp/servers').set('content-type', 'application/json').send('{nope').expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });
  });

  describe('update', () => {
    beforeAll(async () => {
      await api()
        .post('/api/mcp/servers')
        .send(valid({ name: 'editable', headers: { Authorization: `Bearer ${SECRET}`, 'X-Other': 'other-value-1' } }))
        .expect(201);
    });

    it('Scenario: a built-in server is read-only → 403', async () => {
      const res = await api().put('/api/mcp/servers/zeta_builtin').send(valid({ name: undefined })).expect(403);
      expect(res.body.detail).toBe('built-in MCP servers are read-only');
    });

    it('Scenario: an unknown server → 404', async () => {
      const res = await api().put('/api/mcp/servers/nope').send(valid({ name: undefined })).expect(404);
      expect(res.body.detail).toBe('MCP server not found: nope');
    });

    it('Scenario: a name in the body → 422 (the name is the path)', async () => {
      await api().put('/api/mcp/servers/editable').send(valid()).expect(422);
    });

    it('Scenario: `********` keeps the stored value; unlisted headers are dropped', async () => {
      const res = await api()
        .put('/api/mcp/servers/editable')
        // same origin as the stored entry (http://127.0.0.1:8090), another path and transport
        .send({ display_name: 'Edited', url: 'http://127.0.0.1:8090/mcp', type: 'streamable_http', headers: { authorization: '********', 'X-New': 'new-value-42' } })
        .expect(200);
      expect(res.body).toMatchObject({
        name: 'editable',
        display_name: 'Edited',
        type: 'streamable_http',
        status: 'disconnected',
        headers: { 'X-New': '********', authorization: '********' },
      });
      expect(Object.keys(res.body.headers)).toEqual(['X-New', 'authorization']);
      const stored = JSON.parse(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')) as Record<string, { headers: Record<string, string> }>;
      expect(stored['editable']!.headers).toEqual({ authorization: `Bearer ${SECRET}`, 'X-New': 'new-value-42' });
    });

    it('Scenario: `********` for a header without a stored value → 422', async () => {
      await expect422(
        'put',
        '/api/mcp/servers/editable',
        { display_name: 'E', url: 'http://127.0.0.1:8091/mcp', headers: { 'X-Unknown': '********' } },
        M.headerMasked('X-Unknown'),
        'headers.X-Unknown',
      );
    });

    it('Scenario: `********` with the URL moved to another origin → 422 naming the header; nothing changes', async () => {
      const fileBefore = await fs.readFile(app.config.mcpUserCatalogPath, 'utf8');
      // another host (localhost is not 127.0.0.1; a name that starts like the address), scheme or port
      const elsewhere = [
        'http://localhost:8090/mcp',
        'https://127.0.0.1:8090/mcp',
        'http://127.0.0.1:8091/mcp',
        'http://[::1]:8090/mcp',
        'http://127.0.0.1.nip.io:8090/mcp',
      ];
      for (const url of elsewhere) {
        await expect422(
          'put',
          '/api/mcp/servers/editable',
          { display_name: 'Moved', url, headers: { authorization: '********' } },
          M.headerOriginMoved('authorization'),
          'headers.authorization',
        );
      }
      expect(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')).toBe(fileBefore);
      const record = (await api().get('/api/mcp/servers')).body.servers.find((s: McpServerRecord) => s.name === 'editable');
      expect(record).toMatchObject({ display_name: 'Edited', url: 'http://127.0.0.1:8090/mcp' });
    });

    it('Scenario: `********` on a spelling of the same origin keeps the value; a new value may move', async () => {
      const kept = await api()
        .put('/api/mcp/servers/editable')
        .send({ display_name: 'Same', url: 'HTTP://127.0.0.1.:8090/other', headers: { authorization: '********' } })
        .expect(200);
      expect(kept.body.headers).toEqual({ authorization: '********' });
      let stored = JSON.parse(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')) as Record<string, { headers: Record<string, string> }>;
      expect(stored['editable']!.headers).toEqual({ authorization: `Bearer ${SECRET}` });
      await api()
        .put('/api/mcp/servers/editable')
        .send({ display_name: 'Moved', url: 'http://localhost:8090/mcp', headers: { authorization: 'Bearer moved-value-77' } })
        .expect(200);
      stored = JSON.parse(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')) as Record<string, { headers: Record<string, string> }>;
      expect(stored['editable']!.headers).toEqual({ authorization: 'Bearer moved-value-77' });
    });

    it('Scenario: after a refused move the stored secret only ever goes to the stored origin', async () => {
      const a = await SinkServer.start();
      const b = await SinkServer.start();
      try {
        await api()
          .post('/api/mcp/servers')
          .send(valid({ name: 'sinky', url: `${a.origin}/sse`, headers: { 'X-Api-Key': SECRET } }))
          .expect(201);
        await expect422(
          'put',
          '/api/mcp/servers/sinky',
          { display_name: 'Sinky', url: `${b.origin}/sse`, headers: { 'X-Api-Key': '********' } },
          M.headerOriginMoved('X-Api-Key'),
          'headers.X-Api-Key',
        );
        const connected = await api().post('/api/mcp/servers/sinky/connect').expect(200);
        expect(connected.body.status).toBe('error');
        expect(a.requests.length).toBeGreaterThan(0);
        expect(a.requests[0]!.headers['x-api-key']).toBe(SECRET);
        expect(b.requests).toHaveLength(0);
        await api().delete('/api/mcp/servers/sinky').expect(204);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('Scenario: update validates like create (type, display name, url)', async () => {
      await expect422('put', '/api/mcp/servers/editable', { type: 'ws', display_name: 'E', url: 'http://a.b' }, M.type, 'type');
      await expect422('put', '/api/mcp/servers/editable', { url: 'http://a.b', display_name: ' ' }, M.displayName, 'display_name');
      await expect422('put', '/api/mcp/servers/editable', { display_name: 'E', url: 'x' }, M.urlAbsolute, 'url');
    });
  });

  describe('delete, connect, disconnect, tools', () => {
    it('Scenario: deleting a built-in → 403, an unknown server → 404', async () => {
      expect((await api().delete('/api/mcp/servers/alpha_stdio').expect(403)).body.detail).toBe(
        'built-in MCP servers are read-only',
      );
      expect((await api().delete('/api/mcp/servers/nope').expect(404)).body.detail).toBe('MCP server not found: nope');
    });

    it('Scenario: deleting a user server → 204, gone from the list and the file', async () => {
      await api().post('/api/mcp/servers').send(valid({ name: 'doomed' })).expect(201);
      await api().delete('/api/mcp/servers/doomed').expect(204);
      const list = (await api().get('/api/mcp/servers')).body.servers as McpServerRecord[];
      expect(list.map((s) => s.name)).not.toContain('doomed');
      expect(Object.keys(JSON.parse(await fs.readFile(app.config.mcpUserCatalogPath, 'utf8')))).not.toContain('doomed');
      await api().get('/api/mcp/servers/doomed/tools').expect(404);
    });

    it.each([
      ['post', '/api/mcp/servers/nope/connect'],
      ['post', '/api/mcp/servers/nope/disconnect'],
      ['get', '/api/mcp/servers/nope/tools'],
    ] as const)('Scenario: %s %s for an unknown server → 404', async (method, path) => {
      const res = await api()[method](path).expect(404);
      expect(res.body).toMatchObject({ status: 404, detail: 'MCP server not found: nope' });
    });

    it('Scenario: connecting an unreachable server → 200 with status error; disconnect → 200 disconnected', async () => {
      const res = await api().post('/api/mcp/servers/zeta_builtin/connect').expect(200);
      expect(res.body).toMatchObject({ name: 'zeta_builtin', status: 'error', connected: false, tool_count: 0 });
      expect(typeof res.body.status_error).toBe('string');
      expect(res.body.status_error).not.toContain('builtin-secret-1234');
      const down = await api().post('/api/mcp/servers/zeta_builtin/disconnect').expect(200);
      expect(down.body).toMatchObject({ status: 'disconnected', connected: false });
      const tools = await api().get('/api/mcp/servers/zeta_builtin/tools').expect(200);
      expect(tools.body).toEqual({
        server: 'zeta_builtin',
        display_name: 'Zeta',
        tools: [],
        source: 'none',
        status: 'disconnected',
        status_error: null,
        tool_count: 0,
      });
    });
  });
});

describe('MCP catalog at startup (e2e)', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-start-'));
    await fs.mkdir(join(dataDir, 'mcp'), { recursive: true });
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const start = () => startTestApp({ dataDir, env: { CASHCODE_MCP_CATALOG: join(dataDir, 'no-builtins.json') } });

  it('Scenario: a malformed user catalog is a startup error naming the file', async () => {
    await fs.writeFile(join(dataDir, 'mcp', 'servers.json'), '{ not json');
    await expect(start()).rejects.toThrow(`Invalid MCP catalog ${join(dataDir, 'mcp', 'servers.json')}: not valid JSON`);
  });

  it('Scenario: an invalid user entry (stdio without a command) is a startup error naming the file and the server', async () => {
    await fs.writeFile(
      join(dataDir, 'mcp', 'servers.json'),
      JSON.stringify({ evil: { type: 'stdio', display_name: 'Evil', url: 'http://a.b/sse' } }),
    );
    await expect(start()).rejects.toThrow(/Invalid MCP catalog .*servers\.json: server 'evil': command is required/);
  });

  it('Scenario: a valid user catalog loads', async () => {
    await fs.writeFile(
      join(dataDir, 'mcp', 'servers.json'),
      JSON.stringify({ ok_server: { type: 'sse', display_name: 'OK', url: 'http://127.0.0.1:1/sse', headers: { 'X-K': 'value-1234' } } }),
    );
    const app = await start();
    try {
      const res = await request(app.httpUrl).get('/api/mcp/servers').expect(200);
      expect(res.body.servers).toEqual([expect.objectContaining({ name: 'ok_server', headers: { 'X-K': '********' } })]);
    } finally {
      await app.close();
    }
  });
});
