/**
 * The live MCP connections: one McpConnection per catalog server, the agent-tool wrappers registered for its tools
 * (exact ownership: wrapper name → server and original tool, never a prefix match), the schema cache written on every
 * tool-list change, the activation purge when a server goes away, the servers restored after a restart, and the
 * wrappers' tool calls. The catalog REST (mcp-servers.ts), the sign-in (mcp-sign-in.ts) and the per-turn preparation
 * (mcp-turn-preparation.ts) all act on servers through it.
 */
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { McpServerStatus } from '@cashcode/contracts';
import type { ToolContext, ToolResult } from '../agent/agent-tool';
import { ToolRegistry } from '../agent/tool-registry';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { McpActivations } from './mcp-activations';
import { McpCatalog } from './mcp-catalog';
import { McpConnection } from './mcp-connection';
import { McpConnectionLostError } from './mcp-connection-parts';
import { McpConnectionState } from './mcp-connection-state';
import { type RedactionContext, redactionContext, redactMcpError, redactServerText } from './mcp-redaction';
import { McpSchemaCache } from './mcp-schema-cache';
import { mcpSdk } from './mcp-sdk';
import { hashedWrapperName, wrapperName } from './mcp-tool-schema';
import { formatCallResult, McpToolWrapper, type McpToolCaller } from './mcp-tools';
import { MCP_TRANSPORT_FACTORY, type McpTransportFactory } from './mcp-transports';
import type { McpServerConfig } from './mcp.types';
import { isUnauthorizedError, McpOAuth } from './oauth/mcp-oauth';

/** The owner of a registered wrapper. */
export interface OwnedTool {
  server: string;
  original: string;
}

/** Code-unit order (the same on every machine, unlike localeCompare). */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The MCP lines keep the logger name they had when the module was one service (log queries rely on it). */
export const MCP_LOGGER = 'McpService';

@Injectable()
export class McpConnections implements OnApplicationBootstrap, BeforeApplicationShutdown, McpToolCaller {
  private readonly logger = new Logger(MCP_LOGGER);
  private readonly connections = new Map<string, McpConnection>();
  /** wrapper name → owning server and original tool name (exact ownership, never a prefix match) */
  private readonly owners = new Map<string, OwnedTool>();
  /** server → its registered wrapper names */
  private readonly serverWrappers = new Map<string, string[]>();
  /** server → connection generation whose tools are registered */
  private readonly syncedGeneration = new Map<string, number>();
  private shuttingDown = false;
  private readonly desired: McpConnectionState;
  /** what server texts and errors are cleaned of before the model, the client or the log see them */
  readonly redaction: RedactionContext;
  /** the background reconnect of the servers left connected (tests wait for it) */
  restored: Promise<void> = Promise.resolve();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MCP_TRANSPORT_FACTORY) private readonly transportFactory: McpTransportFactory,
    private readonly catalog: McpCatalog,
    private readonly cache: McpSchemaCache,
    private readonly activations: McpActivations,
    private readonly registry: ToolRegistry,
    private readonly events: AppEventBus,
    private readonly oauth: McpOAuth,
  ) {
    this.redaction = redactionContext(config.rootDir, config.dataDir);
    this.desired = new McpConnectionState(config.mcpConnectionStatePath);
  }

  /**
   * Reconnects, in the background, the servers the user left connected before the last shutdown (never delaying the
   * start or /api/health); the chats' activation sets are on disk already and apply again once the tools are back.
   */
  onApplicationBootstrap(): void {
    this.restored = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const names = await this.desired.load();
      const servers = names.map((name) => this.catalog.get(name)).filter((s): s is McpServerConfig => s !== undefined);
      if (servers.length === 0) return;
      this.logger.log(formatEvent('mcp.servers.restoring', { servers: servers.length }));
      await Promise.all(servers.map((server) => this.connect(server).catch(() => undefined)));
    })().catch(() => undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.connections.values()].map((connection) => connection.disconnect().catch(() => undefined)));
    await this.activations.flush();
    await this.desired.flush();
  }

  /** The server's connection (absent before its first connect and after a teardown). */
  get(name: string): McpConnection | undefined {
    return this.connections.get(name);
  }

  /** The connection of this catalog entry, created on first use (an entry replaced by an update gets a new one). */
  connectionFor(server: McpServerConfig): McpConnection {
    const existing = this.connections.get(server.name);
    if (existing && existing.config === server) return existing;
    const connection = new McpConnection(server, {
      factory: this.transportFactory,
      connectTimeoutMs: this.config.mcpConnectTimeoutMs,
      toolTimeoutMs: this.config.mcpToolTimeoutMs,
      redaction: this.redaction,
      workspaceDir: this.config.workspaceDir,
      onToolsChanged: (c) => void this.afterToolsChanged(c, 'list_changed'),
      onLost: (c) => this.afterLost(c),
      authProvider: (config) => this.oauth.provider(config),
      isUnauthorized: isUnauthorizedError,
      onReconnected: (c) => void this.afterToolsChanged(c, 'connected'),
    });
    this.connections.set(server.name, connection);
    return connection;
  }

  /** Wrapper names of a connected server's tools, sorted (empty when not connected). */
  wrappers(server: string): readonly string[] {
    return this.serverWrappers.get(server) ?? [];
  }

  /** The server and original tool name of a registered wrapper. */
  owner(wrapper: string): OwnedTool | undefined {
    return this.owners.get(wrapper);
  }

  /** How many of these servers are in each connection state (states without a server are absent). */
  statusCounts(servers: readonly McpServerConfig[]): Map<McpServerStatus, number> {
    const counts = new Map<McpServerStatus, number>();
    for (const server of servers) {
      const status = this.connections.get(server.name)?.status ?? 'disconnected';
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    return counts;
  }

  /** Connects (one handshake at a time per server) and registers the tools; the outcome is in the connection. */
  async connect(server: McpServerConfig): Promise<void> {
    if (this.shuttingDown) return;
    const connection = this.connectionFor(server);
    const wasConnected = connection.connected;
    await connection.connect();
    if (connection.connected && this.syncedGeneration.get(server.name) !== connection.generation) {
      await this.afterToolsChanged(connection, wasConnected ? 'list_changed' : 'connected');
    }
    if (connection.connected && !this.shuttingDown) await this.desired.set(server.name, true);
  }

  /**
   * Disconnects a server, unregisters its wrappers and purges its tools from every chat's activations.
   * `leftDisconnected`: the user disconnected it, so it is not reconnected after a restart.
   */
  async disconnect(server: McpServerConfig, leftDisconnected = false): Promise<void> {
    const names = await this.knownToolNames(server);
    const connection = this.connections.get(server.name);
    if (connection) await connection.disconnect();
    for (const name of this.unregisterWrappers(server.name)) names.add(name);
    this.syncedGeneration.delete(server.name);
    await this.activations.purge(names);
    this.logger.log(formatEvent('mcp.server.disconnected', { server: server.name }));
    this.emitChanged(server.name, 'disconnected');
    if (leftDisconnected) await this.desired.set(server.name, false);
  }

  /** Before a catalog entry is replaced or deleted: disconnect, purge activations, forget it, delete its cache. */
  async teardown(server: McpServerConfig): Promise<void> {
    await this.disconnect(server, true);
    this.connections.delete(server.name);
    await this.cache.remove(server.name);
  }

  /** Drops the connection object of a deleted server. */
  forget(name: string): void {
    this.connections.delete(name);
  }

  emitChanged(server: string, reason: McpToolsChangedEvent['reason']): void {
    const event: McpToolsChangedEvent = { server, reason };
    this.events.emit(MCP_TOOLS_CHANGED_EVENT, event);
  }

  /** A wrapper's call: the server's answer for the model (redacted), or why it failed; only a cancel throws. */
  async callTool(
    server: string,
    original: string,
    wrapper: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolResult> {
    const connection = this.connections.get(server);
    const config = this.catalog.get(server);
    const reconnectHint = `call mcp_prepare(server_name="${server}") to reconnect it`;
    if (!connection?.connected) {
      return { model: `(MCP tool '${wrapper}' failed: the MCP server '${server}' is not connected; ${reconnectHint})`, ok: false };
    }
    const started = performance.now();
    try {
      const result = formatCallResult(wrapper, await connection.callTool(original, args, ctx.signal, ctx.progress, ctx.elicit));
      result.model = redactServerText(result.model, config, this.redaction);
      this.logger.log(
        formatEvent('mcp.tool.called', {
          server,
          tool: original,
          ok: result.ok !== false,
          duration_ms: Math.round(performance.now() - started),
        }),
        logIds({ chatId: ctx.chatId, turnId: ctx.turnId }),
      );
      return result;
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      let model: string;
      // a tool call ran, so the SDK is loaded already (mcp-sdk.ts)
      const { ErrorCode, McpError: SdkMcpError } = mcpSdk.types();
      if (error instanceof SdkMcpError && error.code === ErrorCode.RequestTimeout) {
        model = `(MCP tool '${wrapper}' timed out after ${Math.round(this.config.mcpToolTimeoutMs / 1000)}s)`;
      } else if (
        error instanceof McpConnectionLostError ||
        (error instanceof SdkMcpError && error.code === ErrorCode.ConnectionClosed) ||
        !connection.connected
      ) {
        model = `(MCP tool '${wrapper}' failed: the MCP server '${server}' closed the connection; ${reconnectHint})`;
      } else {
        model = `(MCP tool '${wrapper}' failed: ${redactMcpError(error, config, this.redaction)})`;
      }
      this.logger.warn(
        formatEvent('mcp.tool.failed', { server, tool: original, error: model }),
        logIds({ chatId: ctx.chatId, turnId: ctx.turnId }),
      );
      return { model, ok: false };
    }
  }

  /** Re-registers a connected server's wrappers and writes its schema cache. */
  private async afterToolsChanged(connection: McpConnection, reason: McpToolsChangedEvent['reason']): Promise<void> {
    if (this.connections.get(connection.name) !== connection || !connection.connected) return;
    this.syncedGeneration.set(connection.name, connection.generation);
    this.unregisterWrappers(connection.name);
    const names: string[] = [];
    for (const tool of connection.tools) {
      // a tool that only runs as a task is not offered to the model (the tools dialog says why)
      if (tool.taskRequired === true) continue;
      let name = wrapperName(connection.name, tool.name);
      const owner = this.owners.get(name);
      if ((owner && owner.server !== connection.name) || names.includes(name) || this.registry.has(name)) {
        name = hashedWrapperName(connection.name, tool.name);
      }
      this.owners.set(name, { server: connection.name, original: tool.name });
      this.registry.register(new McpToolWrapper(name, connection.name, tool, this));
      names.push(name);
    }
    this.serverWrappers.set(connection.name, names.sort(byName));
    await this.cache.write(connection.config, connection.tools);
    this.emitChanged(connection.name, reason);
  }

  private afterLost(connection: McpConnection): void {
    if (this.connections.get(connection.name) !== connection) return;
    this.unregisterWrappers(connection.name);
    this.syncedGeneration.delete(connection.name);
    this.emitChanged(connection.name, 'error');
  }

  private unregisterWrappers(server: string): string[] {
    const names = this.serverWrappers.get(server) ?? [];
    for (const name of names) {
      this.registry.unregister(name);
      this.owners.delete(name);
    }
    this.serverWrappers.delete(server);
    return names;
  }

  /** Every wrapper name the server's tools have or had (live and cached), for purging activations. */
  private async knownToolNames(server: McpServerConfig): Promise<Set<string>> {
    const names = new Set(this.serverWrappers.get(server.name) ?? []);
    const cached = await this.cache.read(server);
    for (const tool of cached?.tools ?? []) {
      names.add(wrapperName(server.name, tool.name));
      names.add(hashedWrapperName(server.name, tool.name));
    }
    return names;
  }
}
