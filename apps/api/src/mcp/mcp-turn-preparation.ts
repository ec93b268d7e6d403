/**
 * What a chat turn's model sees of MCP: before the turn, the chat's activation set (its servers reconnected after a
 * restart) and the explicitly selected connectors (the turn's temporary tools); during the turn, the meta tools that
 * change that view (`tool_search` activates found tools, `mcp_prepare` connects a server and activates its tools) and
 * read a server's resources. Registers the meta tools and the activation source in the tool registry.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { ToolResult } from '../agent/agent-tool';
import { deferredToolsNamedIn, firstSentence } from '../agent/deferred-tools';
import { MCP_TOOL_PREFIX, ToolRegistry } from '../agent/tool-registry';
import { ACTIVATION_CAPACITY, McpActivations } from './mcp-activations';
import { McpCatalog } from './mcp-catalog';
import type { McpConnection } from './mcp-connection';
import { McpConnections } from './mcp-connections';
import { redactMcpError, redactServerText } from './mcp-redaction';
import { McpSchemaCache } from './mcp-schema-cache';
import { McpSearchIndex, type ServerSearchSource } from './mcp-search-index';
import { hashedWrapperName, wrapperName } from './mcp-tool-schema';
import {
  formatResourceContents,
  formatResourceList,
  McpListResourcesTool,
  McpPrepareTool,
  McpReadResourceTool,
  ToolSearchTool,
  type McpMetaToolHost,
} from './mcp-tools';
import { McpError } from './mcp.errors';
import type { McpServerConfig } from './mcp.types';

@Injectable()
export class McpTurnPreparation implements OnModuleInit, McpMetaToolHost {
  private readonly searchIndex = new McpSearchIndex();

  constructor(
    private readonly catalog: McpCatalog,
    private readonly cache: McpSchemaCache,
    private readonly activations: McpActivations,
    private readonly registry: ToolRegistry,
    private readonly connections: McpConnections,
  ) {}

  onModuleInit(): void {
    this.registry.registerMeta(new ToolSearchTool(this));
    this.registry.registerMeta(new McpPrepareTool(this));
    this.registry.registerMeta(new McpListResourcesTool(this));
    this.registry.registerMeta(new McpReadResourceTool(this));
    this.registry.setActivationSource(this.activations);
  }

  usesMcp(chatId: string): boolean {
    return this.activations.activeTools(chatId).some((name) => name.startsWith(MCP_TOOL_PREFIX));
  }

  /** The deferred built-in tools (browser, schedule_task, delegate when configured), by name. */
  deferredToolNames(): string[] {
    return this.registry.deferredTools().map((tool) => tool.name);
  }

  /**
   * Prepares a turn of a chat: loads the chat's activation set (so its activated tools are visible from the first
   * model call) and connects the explicitly selected servers. Returns the selected servers' wrapper names, to be
   * passed to the runner as the turn's temporary tools (visible for this turn only, never persisted).
   * The deferred tools the user's message names (`text`) are activated in the chat first (openspec agent-runner).
   * Throws McpError('connection') with the spec's message when a selected server cannot be used.
   */
  async prepareTurn(chatId: string, selectedServers: readonly string[], signal?: AbortSignal, text?: string): Promise<Set<string>> {
    await this.activations.hydrate(chatId);
    const named = deferredToolsNamedIn(this.registry.deferredTools(), text ?? '').map((tool) => tool.name);
    const fresh = named.filter((name) => !this.activations.isActivated(chatId, name));
    if (fresh.length > 0) await this.activations.activate(chatId, fresh).catch(() => undefined);
    await this.reconnectActivated(chatId);
    return new Set(await this.prepareSelectedConnectors(selectedServers, signal));
  }

  /**
   * Connects the selected servers (in parallel) and returns their wrapper names, in selection order.
   * `Unable to prepare MCP <server>: <status_error>` when one is not connected afterwards;
   * `Unable to use MCP <server>: no tools were discovered` when it has no tools.
   */
  async prepareSelectedConnectors(selectedServers: readonly string[], signal?: AbortSignal): Promise<string[]> {
    const names = [...new Set(selectedServers)];
    const outcomes = await Promise.all(
      names.map(async (name) => {
        const server = this.catalog.get(name);
        if (!server) return { name, error: 'MCP server is not configured' };
        await this.connections.connect(server);
        const connection = this.connections.get(name);
        return connection?.connected ? { name, error: null } : { name, error: connection?.statusError ?? null };
      }),
    );
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('cancelled');
    const tools: string[] = [];
    for (const outcome of outcomes) {
      if (outcome.error !== null || !this.connections.get(outcome.name)?.connected) {
        throw new McpError('connection', `Unable to prepare MCP ${outcome.name}: ${outcome.error ?? 'connection failed'}`);
      }
      const wrappers = this.connections.wrappers(outcome.name);
      if (wrappers.length === 0) {
        throw new McpError('connection', `Unable to use MCP ${outcome.name}: no tools were discovered`);
      }
      tools.push(...wrappers);
    }
    return tools;
  }

  /** `tool_search`: the best matches over live, cached and not-yet-connected servers; live hits are activated. */
  async searchTools(chatId: string, query: string, limit: number): Promise<string> {
    await this.activations.hydrate(chatId);
    const sources = await this.searchSources();
    this.searchIndex.sync(sources);
    const hits = this.searchIndex.search(query, limit);
    const builtins = deferredToolsNamedIn(this.registry.deferredTools(), query);
    if (hits.length === 0 && builtins.length === 0) return `No tools found for "${query}". Try different keywords.`;
    const lines = [`## Search results: ${query}`, ''];
    const activated: string[] = [];
    for (const tool of builtins) {
      lines.push(`- **${tool.name}** (built-in): ${firstSentence(tool.description)}`);
      activated.push(tool.name);
    }
    for (const { doc } of hits) {
      const description = doc.description.trim() || '(no description)';
      if (doc.kind === 'stub') {
        lines.push(`### ${doc.displayName}: ${doc.serverDescription.trim() || '(no description)'}`);
        lines.push('  This service is configured but not connected yet. Connect it first with `mcp_prepare`:');
        lines.push(`  \`mcp_prepare(server_name="${doc.server}")\``);
      } else if (doc.kind === 'cached') {
        lines.push(`- **${doc.original}**: ${description}`);
        lines.push(`  (requires preparation: call \`mcp_prepare(server_name="${doc.server}")\` before using it)`);
      } else {
        lines.push(`- **${doc.wrapper}**: ${description}`);
        activated.push(doc.wrapper);
      }
    }
    if (activated.length > 0) {
      try {
        await this.activations.activate(chatId, activated);
      } catch {
        // the set is active in memory; persisting is retried with the next change
      }
      lines.push('', `✅ **${activated.length} tool(s) activated and callable in this chat:**`);
      for (const name of activated) lines.push(`  - ${name}`);
    }
    return lines.join('\n');
  }

  /** `mcp_prepare`: connects a server and activates all its tools in the chat. */
  async prepareServer(chatId: string, serverName: string, signal: AbortSignal): Promise<string> {
    const server = this.catalog.get(serverName);
    if (!server) return `Error: MCP server '${serverName}' is not configured. Use tool_search to find server names.`;
    await this.connections.connect(server);
    if (signal.aborted) return 'Error: cancelled.';
    const connection = this.connections.get(serverName);
    if (!connection?.connected) {
      return `Error: Failed to connect MCP server '${serverName}': ${connection?.statusError ?? 'connection failed'}. Check its configuration.`;
    }
    const wrappers = [...this.connections.wrappers(serverName)];
    if (wrappers.length === 0) return `MCP server '${serverName}' is connected, but no tools were discovered.`;
    await this.activations.activate(chatId, wrappers);
    const capped =
      wrappers.length > ACTIVATION_CAPACITY
        ? ` (a chat keeps at most ${ACTIVATION_CAPACITY} active tools; the least recently used ones were dropped)`
        : '';
    return `MCP server '${serverName}' is connected. Activated ${wrappers.length} tool(s): ${wrappers.join(', ')}${capped}`;
  }

  listResourcesForModel(serverName: string, cursor: string | undefined, signal: AbortSignal): Promise<ToolResult> {
    return this.resourceCall(serverName, signal, async (connection) => {
      if (!connection.offersResources) return `The MCP server '${serverName}' offers no resources.`;
      return formatResourceList(serverName, await connection.listResources(cursor, signal));
    });
  }

  readResourceForModel(serverName: string, uri: string, signal: AbortSignal): Promise<ToolResult> {
    return this.resourceCall(serverName, signal, async (connection) =>
      formatResourceContents(await connection.readResource(uri, signal)),
    );
  }

  /**
   * After a restart a chat's activated tools belong to servers that are not connected yet: connects those servers
   * (the ones never connected in this process; a server in `error` is left to mcp_prepare) so the tools are live
   * again. Failures only leave the tools invisible.
   */
  private async reconnectActivated(chatId: string): Promise<void> {
    const missing = new Set(this.activations.activeTools(chatId).filter((name) => !this.registry.has(name)));
    if (missing.size === 0) return;
    const owners: McpServerConfig[] = [];
    for (const server of this.catalog.list()) {
      const connection = this.connections.get(server.name);
      // a server being connected (the background restore after a start) is awaited: connect() shares its handshake
      if (connection && connection.status !== 'disconnected' && connection.status !== 'connecting') continue;
      const cached = await this.cache.read(server);
      const owns = cached?.tools.some(
        (tool) => missing.has(wrapperName(server.name, tool.name)) || missing.has(hashedWrapperName(server.name, tool.name)),
      );
      if (owns) owners.push(server);
    }
    await Promise.all(owners.map((server) => this.connections.connect(server)));
  }

  private async resourceCall(
    serverName: string,
    signal: AbortSignal,
    run: (connection: McpConnection) => Promise<string>,
  ): Promise<ToolResult> {
    const connection = this.connections.get(serverName);
    const config = this.catalog.get(serverName);
    if (!config) return { model: `Error: unknown MCP server '${serverName}'.`, ok: false };
    if (!connection?.connected) {
      return {
        model: `Error: the MCP server '${serverName}' is not connected; call mcp_prepare(server_name="${serverName}") first.`,
        ok: false,
      };
    }
    try {
      return { model: redactServerText(await run(connection), config, this.connections.redaction), ok: true };
    } catch (error) {
      if (signal.aborted) throw error;
      return { model: `Error: ${redactMcpError(error, config, this.connections.redaction)}`, ok: false };
    }
  }

  private async searchSources(): Promise<ServerSearchSource[]> {
    const servers = this.catalog.list();
    return Promise.all(
      servers.map(async (config) => {
        const connection = this.connections.get(config.name);
        const live =
          connection?.connected && connection.config === config
            ? this.connections.wrappers(config.name).map((wrapper) => ({
                wrapper,
                tool: connection.tools.find((t) => t.name === this.connections.owner(wrapper)!.original)!,
              }))
            : null;
        const peeked = this.cache.peek(config);
        const cached = peeked === undefined ? await this.cache.read(config) : peeked;
        return {
          config,
          live,
          liveVersion: connection?.generation ?? 0,
          cached: cached?.tools ?? null,
          cacheVersion: this.cache.version(config.name),
        };
      }),
    );
  }
}
