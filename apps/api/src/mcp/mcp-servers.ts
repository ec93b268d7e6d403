/**
 * The MCP marketplace behind `/api/mcp/servers`: the catalog's REST rules (built-in entries are read-only, a user entry
 * is validated, replaced or deleted with its connection torn down), import from a client configuration, connect and
 * disconnect on request, and the records the console shows (masked secrets, connection state, tools, resources).
 * Connections themselves are McpConnections'.
 */
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  MCP_MASKED_VALUE,
  type McpImportResponse,
  type McpResourceRecord,
  type McpServerRecord,
  type McpServerResourcesResponse,
  type McpServerStatus,
  type McpServerToolsResponse,
  type McpToolRecord,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { McpCatalog } from './mcp-catalog';
import { byName, MCP_LOGGER, McpConnections } from './mcp-connections';
import { planImport } from './mcp-import';
import { redactMcpError, registerServerSecrets } from './mcp-redaction';
import { McpSchemaCache } from './mcp-schema-cache';
import { wrapperName } from './mcp-tool-schema';
import { validateServerName, validateUserEntry } from './mcp-validation';
import { MCP_MESSAGES, McpError } from './mcp.errors';
import type { McpServerConfig, McpToolDescriptor } from './mcp.types';
import { McpOAuth } from './oauth/mcp-oauth';

/** The additive `title` / `annotations` of a tool record, when the server declared them. */
function withAnnotations(record: McpToolRecord, tool: McpToolDescriptor | undefined): McpToolRecord {
  if (tool?.title !== undefined) record.title = tool.title;
  if (tool?.annotations !== undefined) record.annotations = { ...tool.annotations };
  return record;
}

/** `GET …/resources` reads at most this many pages and lists at most this many resources */
const MAX_RESOURCE_PAGES = 10;
const MAX_LISTED_RESOURCES = 500;

@Injectable()
export class McpServers implements OnModuleInit {
  private readonly logger = new Logger(MCP_LOGGER);

  constructor(
    private readonly catalog: McpCatalog,
    private readonly cache: McpSchemaCache,
    private readonly connections: McpConnections,
    private readonly oauth: McpOAuth,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.catalog.load();
    for (const server of this.catalog.list()) registerServerSecrets(server);
    this.logger.debug(
      formatEvent('mcp.catalog.loaded', {
        servers: this.catalog.list().length,
        builtin: this.catalog.list().filter((s) => s.builtin).length,
      }),
    );
  }

  list(): McpServerRecord[] {
    return this.catalog.list().map((server) => this.record(server));
  }

  /**
   * How many catalog servers are in each connection state (states without a server are absent). One map lookup per
   * server, no record is built: the metrics endpoint reads it on every scrape.
   */
  statusCounts(): Map<McpServerStatus, number> {
    return this.connections.statusCounts(this.catalog.list());
  }

  async create(body: Record<string, unknown>): Promise<McpServerRecord> {
    const name = validateServerName(body['name']);
    const entry = validateUserEntry(body, null, name);
    if (this.catalog.has(name)) throw new McpError('conflict', MCP_MESSAGES.exists(name));
    const server = await this.catalog.addUser(name, entry);
    registerServerSecrets(server);
    this.logger.log(formatEvent('mcp.server.created', { server: name, transport: server.type }));
    this.connections.emitChanged(name, 'catalog');
    return this.record(server);
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
        this.connections.emitChanged(name, 'catalog');
        out.created.push(this.record(server));
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
    await this.connections.teardown(current);
    const server = await this.catalog.replaceUser(name, entry);
    registerServerSecrets(server);
    this.logger.log(formatEvent('mcp.server.updated', { server: name, transport: server.type }));
    this.connections.emitChanged(name, 'catalog');
    return this.record(server);
  }

  async delete(name: string): Promise<void> {
    const current = this.mutable(name);
    await this.connections.teardown(current);
    await this.catalog.removeUser(name);
    await this.oauth.signOut(name);
    this.connections.forget(name);
    this.logger.log(formatEvent('mcp.server.deleted', { server: name }));
    this.connections.emitChanged(name, 'catalog');
  }

  /** Always resolves with the server's record after the attempt (404 only for an unknown server). */
  async connect(name: string): Promise<McpServerRecord> {
    const server = this.known(name);
    await this.connections.connect(server);
    return this.record(server);
  }

  async disconnect(name: string): Promise<McpServerRecord> {
    const server = this.known(name);
    await this.connections.disconnect(server, true);
    return this.record(server);
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
      const tools: McpToolRecord[] = this.connections
        .wrappers(name)
        .map((wrapper) => {
          const owned = this.connections.owner(wrapper)!;
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
      throw new McpError(
        'connection',
        `listing the resources failed: ${redactMcpError(error, connection.config, this.connections.redaction)}`,
      );
    }
    return { ...base, resources, truncated };
  }

  /** A catalog server by name; 404 (McpError not_found) when there is none. */
  known(name: string): McpServerConfig {
    const server = this.catalog.get(name);
    if (!server) throw new McpError('not_found', MCP_MESSAGES.notFound(name));
    return server;
  }

  /** The server's REST record: secrets masked, connection state, tool count. */
  record(server: McpServerConfig): McpServerRecord {
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
      tool_count: connection?.connected ? this.connections.wrappers(server.name).length : 0,
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

  private mutable(name: string): McpServerConfig {
    const server = this.known(name);
    if (server.builtin) throw new McpError('permission', MCP_MESSAGES.builtinReadOnly);
    return server;
  }
}
