/**
 * The MCP module's services wired by hand as McpModule wires them, for unit specs that run without Nest: the real
 * catalog, schema cache, activation sets and OAuth store on the given configuration's paths.
 */
import type { ToolRegistry } from '../../src/agent/tool-registry';
import type { AppConfig } from '../../src/config/app-config';
import type { AppEventBus } from '../../src/events/event-bus';
import type { MemoryStores } from '../../src/memory/memory-stores';
import { McpActivations } from '../../src/mcp/mcp-activations';
import { McpCatalog } from '../../src/mcp/mcp-catalog';
import { McpConnections } from '../../src/mcp/mcp-connections';
import { McpSchemaCache } from '../../src/mcp/mcp-schema-cache';
import { McpServers } from '../../src/mcp/mcp-servers';
import { defaultTransportFactory } from '../../src/mcp/mcp-transports';
import { McpTurnPreparation } from '../../src/mcp/mcp-turn-preparation';
import { McpService } from '../../src/mcp/mcp.service';
import { McpOAuth } from '../../src/mcp/oauth/mcp-oauth';

export interface McpServices {
  servers: McpServers;
  connections: McpConnections;
  turns: McpTurnPreparation;
  service: McpService;
  /** what Nest runs at module init: the catalog is loaded, the meta tools are registered */
  init(): Promise<void>;
  /** what Nest runs before shutdown: connections closed, activation sets and connection state flushed */
  shutdown(): Promise<void>;
}

export function createMcpServices(
  config: AppConfig,
  deps: { registry: ToolRegistry; bus: AppEventBus; memory: MemoryStores },
): McpServices {
  const catalog = new McpCatalog(config);
  const cache = new McpSchemaCache(config);
  const activations = new McpActivations(deps.memory.history, deps.memory.chats);
  const oauth = new McpOAuth(config);
  const connections = new McpConnections(
    config,
    defaultTransportFactory,
    catalog,
    cache,
    activations,
    deps.registry,
    deps.bus,
    oauth,
  );
  const servers = new McpServers(catalog, cache, connections, oauth);
  const turns = new McpTurnPreparation(catalog, cache, activations, deps.registry, connections);
  return {
    servers,
    connections,
    turns,
    service: new McpService(servers, connections, turns),
    init: async () => {
      await servers.onModuleInit();
      turns.onModuleInit();
    },
    shutdown: () => connections.beforeApplicationShutdown(),
  };
}
