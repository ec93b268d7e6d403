/**
 * MCP orchestration: the catalog REST rules, one connection per server, wrapper
 * registration with exact ownership, the schema cache, tool_search / mcp_prepare, activation purges, and the per-turn
 * preparation of explicitly selected connectors.
 */
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { AppEventBus } from '../events/event-bus';
import {
  MCP_MASKED_VALUE,
  type McpResourceRecord,
  type McpImportResponse,
  type McpServerRecord,
  type McpServerStatus,
  type McpServerResourcesResponse,
  type McpServerToolsResponse,
  type McpToolRecord,
} from '@cashcode/contracts';
import type { ToolContext, ToolResult } from '../agent/agent-tool';
import { ToolRegistry } from '../agent/tool-registry';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MCP_MESSAGES, McpError } from './mcp.errors';
import { type McpServerConfig, type McpToolDescriptor } from './mcp.types';
import { MCP_TOOLS_CHANGED_EVENT, type McpToolsChangedEvent } from '../events/app-events';
import { ACTIVATION_CAPACITY, McpActivations } from './mcp-activations';
import { McpCatalog } from './mcp-catalog';
import { McpConnection, McpConnectionLostError } from './mcp-connection';
import { McpConnectionState } from './mcp-connection-state';
import { planImport } from './mcp-import';
import { type RedactionContext, redactionContext, redactMcpError, redactServerText, registerServerSecrets } from './mcp-redaction';
import { McpSchemaCache } from './mcp-schema-cache';
import { McpSearchIndex, type ServerSearchSource } from './mcp-search-index';
import { hashedWrapperName, wrapperName } from './mcp-tool-schema';
import {
  formatCallResult,
  formatResourceContents,
  formatResourceList,
  McpListResourcesTool,
  McpPrepareTool,
  McpReadResourceTool,
  McpToolWrapper,
  ToolSearchTool,
  type McpToolHost,
} from './mcp-tools';
import { mcpSdk } from './mcp-sdk';
import { MCP_TRANSPORT_FACTORY, type McpTransportFactory } from './mcp-transports';
import { validateServerName, validateUserEntry } from './mcp-validation';
import { type CallbackOutcome, isUnauthorizedError, McpOAuth } from './oauth/mcp-oauth';

interface OwnedTool {
  server: string;
  original: string;
}

/** The additive `title` / `annotations` of a tool record, when the server declared them. */
function withAnnotations(record: McpToolRecord, tool: McpToolDescriptor | undefined): McpToolRecord {
  if (tool?.title !== undefined) record.title = tool.title;
  if (tool?.annotations !== undefined) record.annotations = { ...tool.annotations };
  return record;
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `GET …/resources` reads at most this many pages and lists at most this many resources */
const MAX_RESOURCE_PAGES = 10;
const MAX_LISTED_RESOURCES = 500;

@Injectable()
export class McpService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, McpToolHost {
  private readonly logger = new Logger(McpService.name);
  private readonly connections = new Map<string, McpConnection>();
  /** wrapper name → owning server and original tool name (exact ownership, never a prefix match) */
  private readonly owners = new Map<string, OwnedTool>();
  /** server → its registered wrapper names */
  private readonly serverWrappers = new Map<string, string[]>();
  /** server → connection generation whose tools are registered */
  private readonly syncedGeneration = new Map<string, number>();
  private readonly searchIndex = new McpSearchIndex();
  private readonly redaction: RedactionContext;
  private shuttingDown = false;
  private readonly desired: McpConnectionState;
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
      await Promise.all(servers.map((server) => this.connectServer(server).catch(() => undefined)));
    })().catch(() => undefined);
  }

  async onModuleInit(): Promise<void> {
    await this.catalog.load();
    for (const server of this.catalog.list()) registerServerSecrets(server);
    this.registry.registerMeta(new ToolSearchTool(this));
    this.registry.registerMeta(new McpPrepareTool(this));
    this.registry.registerMeta(new McpListResourcesTool(this));
    this.registry.registerMeta(new McpReadResourceTool(this));
    this.registry.setActivationSource(this.activations);
    this.logger.debug(
      formatEvent('mcp.catalog.loaded', {
        servers: this.catalog.list().length,
        builtin: this.catalog.list().filter((s) => s.builtin).length,
      }),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.connections.values()].map((connection) => connection.disconnect().catch(() => undefined)));
    await this.activations.flush();
    await this.desired.flush();
  }

  // ------------------------------------------------------------------------------------------ REST

  list(): McpServerRecord[] {
    return this.catalog.list().map((server) => this.toRecord(server));
  }

  /**
   * How many catalog servers are in each connection state (states without a server are absent). One map lookup per
   * server, no record is built: the metrics endpoint reads it on every scrape.
   */
  statusCounts(): Map<McpServerStatus, number> {
    const counts = new Map<McpServerStatus, number>();
    for (const server of this.catalog.list()) {
      const status = this.connections.get(server.name)?.status ?? 'disconnected';
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    return counts;
  }

  async create(body: Record<string, unknown>): Promise<McpServerRecord> {
    const name = validateServerName(body['name']);
    const entry = validateUserEntry(body, null, name);
    if (this.catalog.has(name)) throw new McpError('conflict', MCP_MESSAGES.exists(name));
    const server = await this.catalog.addUser(name, entry);
    registerServerSecrets(server);
    this.logger.log(formatEvent('mcp.server.created', { server: name, transport: server.type }));
    this.emitChanged(name, 'catalog');
    return this.toRecord(server);
  }

  /** Creates a user entry from each importable server of a client configuration; reports each created and skipped one. */
  async import(config: unknown): Promise<McpImportResponse> {
    const plan = planImport(config);
    const out: McpImportResponse = { created: [], skipped: [...plan.skipped] };
    for (const candidate of plan.candidates) {
      let name: string;
      try {
        name = validateServerName(candidate.name);
        const entry = validateUserEntry(candidate.body, null, candidate.sourceName);
        if (this.catalog.has(name)) {
          out.skipped.push({ name: candidate.sourceName, reason: 'conflict', detail: MCP_MESSAGES.exists(name) });
          continue;
        }
        const server = await this.catalog.addUser(name, entry);
        registerServerSecrets(server);
        this.logger.log(formatEvent('mcp.server.created', { server: name, transport: server.type, via: 'import' }));
        this.emitChanged(name, 'catalog');
        out.created.push(this.toRecord(server));
      } catch (error) {
        if (!(error instanceof McpError)) throw error;
        const reason = error.code === 'conflict' ? 'conflict' : 'invalid';
        const detail = error.field ? `${error.field}: ${error.message}` : error.message;
        out.skipped.push({ name: candidate.sourceName, reason, detail });
      }
    }
    return out;
  }

  async update(name: string, body: Record<string, unknown>): Promise<McpServerRecord> {
    const current = this.mutable(name);
    // `********` keeps a stored header value only while the URL stays on the stored entry's origin
    const entry = validateUserEntry(body, {
      type: current.type,
      url: current.url,
      headers: current.headers,
      command: current.command,
      args: current.args,
      env: current.env,
    }, name);
    await this.teardown(current);
    const server = await this.catalog.replaceUser(name, entry);
    registerServerSecrets(server);
    this.logger.log(formatEvent('mcp.server.updated', { server: name, transport: server.type }));
    this.emitChanged(name, 'catalog');
    return this.toRecord(server);
  }

  async delete(name: string): Promise<void> {
    const current = this.mutable(name);
    await this.teardown(current);
    await this.catalog.removeUser(name);
    await this.oauth.signOut(name);
    this.connections.delete(name);
    this.logger.log(formatEvent('mcp.server.deleted', { server: name }));
    this.emitChanged(name, 'catalog');
  }

  /** Always resolves with the server's record after the attempt (404 only for an unknown server). */
  async connect(name: string): Promise<McpServerRecord> {
    const server = this.known(name);
    await this.connectServer(server);
    return this.toRecord(server);
  }

  async disconnect(name: string): Promise<McpServerRecord> {
    const server = this.known(name);
    await this.disconnectServer(server);
    await this.desired.set(name, false);
    return this.toRecord(server);
  }

  async tools(name: string): Promise<McpServerToolsResponse> {
    const server = this.known(name);
    const connection = this.connections.get(name);
    const base = {
      server: name,
      display_name: server.displayName,
      status: connection?.status ?? 'disconnected',
      status_error: connection?.statusError ?? null,
    } as const;
    if (connection?.connected) {
      const tools: McpToolRecord[] = (this.serverWrappers.get(name) ?? [])
        .map((wrapper) => {
          const owned = this.owners.get(wrapper)!;
          const tool = connection.tools.find((t) => t.name === owned.original);
          return withAnnotations(
            {
              name: wrapper,
              original_name: owned.original,
              description: tool?.description ?? '',
              input_schema: tool?.inputSchema ?? {},
              source: 'live' as const,
              callable: true,
            },
            tool,
          );
        })
        .sort((a, b) => byName(a.name, b.name));
      // tools that only run as tasks are listed, not callable, with the reason
      for (const tool of connection.tools.filter((t) => t.taskRequired === true)) {
        tools.push(
          withAnnotations(
            {
              name: wrapperName(name, tool.name),
              original_name: tool.name,
              description: tool.description,
              input_schema: tool.inputSchema,
              source: 'live' as const,
              callable: false,
              unavailable_reason: 'task_required' as const,
            },
            tool,
          ),
        );
      }
      return { ...base, tools, source: 'live', tool_count: tools.length };
    }
    const cached = await this.cache.read(server);
    if (cached && cached.tools.length > 0) {
      const tools: McpToolRecord[] = cached.tools
        .map((tool) =>
          withAnnotations(
            {
              name: wrapperName(name, tool.name),
              original_name: tool.name,
              description: tool.description,
              input_schema: tool.inputSchema,
              source: 'cache' as const,
              callable: false,
            },
            tool,
          ),
        )
        .sort((a, b) => byName(a.name, b.name));
      return { ...base, tools, source: 'cache', tool_count: tools.length };
    }
    return { ...base, tools: [], source: 'none', tool_count: 0 };
  }

  // ------------------------------------------------------------------------------------------ OAuth

  /** "Sign in": a fresh authorization URL for a network server (stored tokens are dropped first). */
  async oauthStart(name: string): Promise<{ authorization_url: string }> {
    const server = this.known(name);
    if (server.type === 'stdio') throw new McpError('validation', 'OAuth sign-in is for SSE and Streamable HTTP servers', 'name');
    await this.disconnectServer(server);
    try {
      return { authorization_url: await this.oauth.start(server) };
    } catch (error) {
      throw new McpError('connection', `Unable to start the sign-in for ${name}: ${redactMcpError(error, server, this.redaction)}`);
    }
  }

  /** The browser's return from the authorization server; connects the server after a successful sign-in. */
  async oauthCallback(query: Record<string, unknown>): Promise<CallbackOutcome> {
    const outcome = await this.oauth.complete(query, (name) => this.catalog.get(name));
    if (outcome.server === null) return outcome;
    const server = this.catalog.get(outcome.server)!;
    if (!outcome.ok) {
      this.connectionFor(server).markNeedsAuth(outcome.message);
      this.emitChanged(server.name, 'error');
      return outcome;
    }
    await this.connectServer(server);
    return outcome;
  }

  /** "Sign out": disconnects and deletes the stored tokens and client registration. */
  async oauthSignOut(name: string): Promise<McpServerRecord> {
    const server = this.known(name);
    await this.disconnectServer(server);
    await this.oauth.signOut(name);
    return this.toRecord(server);
  }

  // ------------------------------------------------------------------------------ turns (selected connectors)

  /**
   * Prepares a turn of a chat: loads the chat's activation set (so its activated tools are visible from the first
   * model call) and connects the explicitly selected servers. Returns the selected servers' wrapper names, to be
   * passed to the runner as the turn's temporary tools (visible for this turn only, never persisted).
   * Throws McpError('connection') with the spec's message when a selected server cannot be used.
   */
  async prepareTurn(chatId: string, selectedServers: readonly string[], signal?: AbortSignal): Promise<Set<string>> {
    await this.activations.hydrate(chatId);
    await this.reconnectActivated(chatId);
    return new Set(await this.prepareSelectedConnectors(selectedServers, signal));
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
    await Promise.all(owners.map((server) => this.connectServer(server)));
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
        await this.connectServer(server);
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
      const wrappers = this.serverWrappers.get(outcome.name) ?? [];
      if (wrappers.length === 0) {
        throw new McpError('connection', `Unable to use MCP ${outcome.name}: no tools were discovered`);
      }
      tools.push(...wrappers);
    }
    return tools;
  }

  /** Wrapper names of a connected server's tools (empty when not connected). */
  serverToolNames(name: string): string[] {
    return [...(this.serverWrappers.get(name) ?? [])];
  }

  // ------------------------------------------------------------------------------------------ McpToolHost

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

  /** `GET /api/mcp/servers/{name}/resources`: the first pages of a connected server's resources. */
  async resources(name: string): Promise<McpServerResourcesResponse> {
    this.known(name);
    const connection = this.connections.get(name);
    const base = { server: name, status: connection?.status ?? ('disconnected' as const) };
    if (!connection?.connected || !connection.offersResources) return { ...base, resources: [], truncated: false };
    const resources: McpResourceRecord[] = [];
    let cursor: string | undefined;
    let truncated = false;
    try {
      for (let page = 0; page < MAX_RESOURCE_PAGES; page++) {
        const result = await connection.listResources(cursor);
        for (const r of result.resources) {
          if (resources.length >= MAX_LISTED_RESOURCES) {
            truncated = true;
            break;
          }
          const record: McpResourceRecord = { uri: r.uri, name: r.name };
          if (typeof r.title === 'string') record.title = r.title;
          if (typeof r.description === 'string') record.description = r.description;
          if (typeof r.mimeType === 'string') record.mime_type = r.mimeType;
          if (typeof r.size === 'number') record.size = r.size;
          resources.push(record);
        }
        cursor = result.nextCursor;
        if (!cursor || truncated) break;
      }
      if (cursor) truncated = true;
    } catch (error) {
      throw new McpError('connection', `listing the resources failed: ${redactMcpError(error, connection.config, this.redaction)}`);
    }
    return { ...base, resources, truncated };
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
      return { model: redactServerText(await run(connection), config, this.redaction), ok: true };
    } catch (error) {
      if (signal.aborted) throw error;
      return { model: `Error: ${redactMcpError(error, config, this.redaction)}`, ok: false };
    }
  }

  async searchTools(chatId: string, query: string, limit: number): Promise<string> {
    await this.activations.hydrate(chatId);
    const sources = await this.searchSources();
    this.searchIndex.sync(sources);
    const hits = this.searchIndex.search(query, limit);
    if (hits.length === 0) return `No tools found for "${query}". Try different keywords.`;
    const lines = [`## Search results: ${query}`, ''];
    const activated: string[] = [];
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

  async prepareServer(chatId: string, serverName: string, signal: AbortSignal): Promise<string> {
    const server = this.catalog.get(serverName);
    if (!server) return `Error: MCP server '${serverName}' is not configured. Use tool_search to find server names.`;
    await this.connectServer(server);
    if (signal.aborted) return 'Error: cancelled.';
    const connection = this.connections.get(serverName);
    if (!connection?.connected) {
      return `Error: Failed to connect MCP server '${serverName}': ${connection?.statusError ?? 'connection failed'}. Check its configuration.`;
    }
    const wrappers = this.serverWrappers.get(serverName) ?? [];
    if (wrappers.length === 0) return `MCP server '${serverName}' is connected, but no tools were discovered.`;
    await this.activations.activate(chatId, wrappers);
    const capped =
      wrappers.length > ACTIVATION_CAPACITY
        ? ` (a chat keeps at most ${ACTIVATION_CAPACITY} active tools; the least recently used ones were dropped)`
        : '';
    return `MCP server '${serverName}' is connected. Activated ${wrappers.length} tool(s): ${wrappers.join(', ')}${capped}`;
  }

  // ------------------------------------------------------------------------------------------ internals

  private known(name: string): McpServerConfig {
    const server = this.catalog.get(name);
    if (!server) throw new McpError('not_found', MCP_MESSAGES.notFound(name));
    return server;
  }

  private mutable(name: string): McpServerConfig {
    const server = this.known(name);
    if (server.builtin) throw new McpError('permission', MCP_MESSAGES.builtinReadOnly);
    return server;
  }

  private connectionFor(server: McpServerConfig): McpConnection {
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

  /** Connects (one handshake at a time per server) and registers the tools; the outcome is in the connection. */
  private async connectServer(server: McpServerConfig): Promise<void> {
    if (this.shuttingDown) return;
    const connection = this.connectionFor(server);
    const wasConnected = connection.connected;
    await connection.connect();
    if (connection.connected && this.syncedGeneration.get(server.name) !== connection.generation) {
      await this.afterToolsChanged(connection, wasConnected ? 'list_changed' : 'connected');
    }
    if (connection.connected && !this.shuttingDown) await this.desired.set(server.name, true);
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

  private async disconnectServer(server: McpServerConfig): Promise<void> {
    const names = await this.knownToolNames(server);
    const connection = this.connections.get(server.name);
    if (connection) await connection.disconnect();
    for (const name of this.unregisterWrappers(server.name)) names.add(name);
    this.syncedGeneration.delete(server.name);
    await this.activations.purge(names);
    this.logger.log(formatEvent('mcp.server.disconnected', { server: server.name }));
    this.emitChanged(server.name, 'disconnected');
  }

  /** Update/delete: disconnect, purge activations, delete the cache. */
  private async teardown(server: McpServerConfig): Promise<void> {
    await this.disconnectServer(server);
    await this.desired.set(server.name, false);
    this.connections.delete(server.name);
    await this.cache.remove(server.name);
  }

  private async searchSources(): Promise<ServerSearchSource[]> {
    const servers = this.catalog.list();
    return Promise.all(
      servers.map(async (config) => {
        const connection = this.connections.get(config.name);
        const live =
          connection?.connected && connection.config === config
            ? (this.serverWrappers.get(config.name) ?? []).map((wrapper) => ({
                wrapper,
                tool: connection.tools.find((t) => t.name === this.owners.get(wrapper)!.original)!,
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

  private toRecord(server: McpServerConfig): McpServerRecord {
    const connection = this.connections.get(server.name);
    const status = connection?.status ?? 'disconnected';
    const headers: Record<string, string> = {};
    for (const name of Object.keys(server.headers).sort(byName)) headers[name] = MCP_MASKED_VALUE;
    const record: McpServerRecord = {
      name: server.name,
      display_name: server.displayName,
      description: server.description,
      type: server.type,
      url: server.type === 'stdio' ? '' : server.url,
      headers,
      builtin: server.builtin,
      mutable: !server.builtin,
      status,
      connected: status === 'connected',
      status_error: connection?.statusError ?? null,
      tool_count: connection?.connected ? (this.serverWrappers.get(server.name)?.length ?? 0) : 0,
    };
    if (server.type === 'stdio' && !server.builtin) {
      const env: Record<string, string> = {};
      for (const name of Object.keys(server.env).sort(byName)) env[name] = MCP_MASKED_VALUE;
      record.command = server.command;
      record.args = [...server.args];
      record.env = env;
      record.cwd = server.userCwd ?? '';
    }
    if (connection?.status === 'reconnecting') {
      record.reconnect_attempt = connection.reconnectAttempt;
      if (connection.nextRetryAt !== null) record.next_retry_at = new Date(connection.nextRetryAt).toISOString();
    }
    return record;
  }

  private emitChanged(server: string, reason: McpToolsChangedEvent['reason']): void {
    const event: McpToolsChangedEvent = { server, reason };
    this.events.emit(MCP_TOOLS_CHANGED_EVENT, event);
  }
}

