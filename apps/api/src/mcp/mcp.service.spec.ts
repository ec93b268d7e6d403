/**
 * The MCP services (McpServers, McpConnections, McpTurnPreparation behind McpService) against the repo's real test stdio MCP server (mcp_servers/test_stdio_mcp), with the real catalog,
 * schema cache, activation sets, tool registry and event bus; the configuration is loadConfig's, on temp dirs.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { ToolRegistry } from '../agent/tool-registry';
import { loadConfig } from '../config/app-config';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { createMemoryStores } from '../memory/memory-stores';
import { createMcpServices, type McpServices } from '../../test/support/mcp-services';
import { ensureMcpServersBuilt, STDIO_SERVER_JS } from '../../test/support/mcp-test-servers';
import { McpError } from './mcp.errors';

jest.setTimeout(60_000);

const REPO_ROOT = resolve(__dirname, '..', '..', '..', '..');

describe('McpService with the test stdio MCP server', () => {
  let dir: string;
  let mcp: McpServices;
  let registry: ToolRegistry;
  const changes: McpToolsChangedEvent[] = [];
  const ctx = { chatId: 'chat-1', turnId: 'b'.repeat(32), signal: new AbortController().signal };

  beforeAll(async () => {
    ensureMcpServersBuilt();
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-'));
    const catalogPath = join(dir, 'mcp_config.json');
    await fs.writeFile(
      catalogPath,
      JSON.stringify({
        test_stdio_mcp: {
          type: 'stdio',
          display_name: 'Test stdio MCP',
          description: 'Test server over stdio with one tool, say_hello.',
          command: 'node',
          args: [STDIO_SERVER_JS],
        },
      }),
    );
    const config = loadConfig(
      { PATH: process.env['PATH'] ?? '', CASHCODE_DATA_DIR: join(dir, 'data'), CASHCODE_MCP_CATALOG: catalogPath },
      REPO_ROOT,
    );
    registry = new ToolRegistry();
    const memory = createMemoryStores(config);
    const bus = new AppEventBus(new EventEmitter2());
    bus.on(MCP_TOOLS_CHANGED_EVENT, (event) => changes.push(event));
    mcp = createMcpServices(config, { registry, bus, memory });
    await mcp.init();
  });

  afterAll(async () => {
    await mcp.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the built-in catalog is listed, disconnected, with the meta tools registered', () => {
    expect(mcp.servers.list()).toEqual([
      expect.objectContaining({ name: 'test_stdio_mcp', type: 'stdio', builtin: true, mutable: false, connected: false }),
    ]);
    expect(registry.has('tool_search')).toBe(true);
    expect(registry.has('mcp_prepare')).toBe(true);
  });

  it('Scenario: connect discovers say_hello, registers its wrapper and publishes mcp.tools.changed', async () => {
    const record = await mcp.servers.connect('test_stdio_mcp');
    expect(record).toMatchObject({ status: 'connected', connected: true, status_error: null, tool_count: 1 });
    const [wrapper] = mcp.service.serverToolNames('test_stdio_mcp');
    expect(wrapper).toMatch(/^mcp_test_stdio_mcp_say_hello/);
    expect(registry.has(wrapper as string)).toBe(true);
    expect(changes).toContainEqual({ server: 'test_stdio_mcp', reason: 'connected' });
    const tools = await mcp.servers.tools('test_stdio_mcp');
    expect(JSON.stringify(tools)).toContain('say_hello');

    const result = await mcp.connections.callTool('test_stdio_mcp', 'say_hello', wrapper as string, {}, ctx);
    expect(result.ok).not.toBe(false);
    expect(result.model).toContain('Hello, Cash');
  });

  it('Scenario: a turn that selects the connector gets its tools as temporary tools; an unknown one fails clearly', async () => {
    const temporary = await mcp.service.prepareTurn(ctx.chatId, ['test_stdio_mcp'], ctx.signal);
    expect([...temporary]).toEqual(mcp.service.serverToolNames('test_stdio_mcp'));
    await expect(mcp.service.prepareTurn(ctx.chatId, ['nope'], ctx.signal)).rejects.toThrow(
      new McpError('connection', 'Unable to prepare MCP nope: MCP server is not configured'),
    );
  });

  it('Scenario: a user server is added and removed (catalog events); disconnect unregisters the wrappers', async () => {
    const remote = { name: 'remote', display_name: 'Remote', type: 'streamable_http', url: 'http://127.0.0.1:9/mcp' };
    const created = await mcp.servers.create(remote);
    expect(created).toMatchObject({ name: 'remote', builtin: false, mutable: true, connected: false });
    expect(changes).toContainEqual({ server: 'remote', reason: 'catalog' });
    await expect(mcp.servers.create(remote)).rejects.toBeInstanceOf(
      McpError,
    );
    await mcp.servers.delete('remote');
    expect(mcp.servers.list().map((server) => server.name)).toEqual(['test_stdio_mcp']);

    const [wrapper] = mcp.service.serverToolNames('test_stdio_mcp');
    const record = await mcp.servers.disconnect('test_stdio_mcp');
    expect(record).toMatchObject({ status: 'disconnected', connected: false });
    expect(registry.has(wrapper as string)).toBe(false);
  });
});
