/**
 * The agent tools of the MCP module: one wrapper per live server tool (`mcp_<server>_<tool>`), and the meta tools
 * `tool_search`, `mcp_prepare` and the resource tools (openspec mcp). The tools only parse arguments and delegate: a
 * wrapper to McpConnections (mcp-connections.ts), the meta tools to McpTurnPreparation (mcp-turn-preparation.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult, ListResourcesResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTool, JsonSchemaObject, McpToolIdentity, ToolContext, ToolResult } from '../agent/agent-tool';
import type { McpToolDescriptor } from './mcp.types';
import { normalizeInputSchema } from './mcp-tool-schema';

/** What a tool wrapper needs: the call over its server's connection. */
export interface McpToolCaller {
  callTool(server: string, original: string, wrapper: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** What the meta tools need: the search, the preparation of a server and its resources. */
export interface McpMetaToolHost {
  searchTools(chatId: string, query: string, limit: number): Promise<string>;
  prepareServer(chatId: string, serverName: string, signal: AbortSignal): Promise<string>;
  listResourcesForModel(serverName: string, cursor: string | undefined, signal: AbortSignal): Promise<ToolResult>;
  readResourceForModel(serverName: string, uri: string, signal: AbortSignal): Promise<ToolResult>;
  /** whether the chat has activated tools of an MCP server */
  usesMcp(chatId: string): boolean;
  /** the deferred built-in tools, by name (tool_search's description names them) */
  deferredToolNames(): string[];
}

/** the model never gets more than this many characters of one MCP result */
export const MAX_RESULT_CHARS = 100_000;

export const TOOL_SEARCH_DEFAULT_LIMIT = 8;
export const TOOL_SEARCH_MAX_LIMIT = 50;

function truncate(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= MAX_RESULT_CHARS) return text;
  return `${chars.slice(0, MAX_RESULT_CHARS).join('')}\n\n[output truncated, ${chars.length} characters in total]`;
}

/** `3 bytes`, `120 KB`, `4.2 MB` */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** decoded size of a base64 text, without decoding it */
export function base64Size(data: string): number {
  const trimmed = data.replace(/\s/gu, '');
  const padding = trimmed.endsWith('==') ? 2 : trimmed.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

function describeBlock(block: CallToolResult['content'][number]): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${formatSize(base64Size(block.data))}]`;
    case 'resource': {
      const resource = block.resource as { uri: string; mimeType?: unknown; text?: unknown; blob?: unknown };
      const mime = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
      if (typeof resource.text === 'string') {
        return `[resource: ${resource.uri}${mime ? ` (${mime})` : ''}]\n${resource.text}`;
      }
      const size = typeof resource.blob === 'string' ? `, ${formatSize(base64Size(resource.blob))}` : '';
      return `[resource: ${resource.uri} (${mime ?? 'application/octet-stream'}${size})]`;
    }
    case 'resource_link':
      return (
        `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}${block.mimeType ? `, ${block.mimeType}` : ''}` +
        ' — read it with mcp_read_resource]'
      );
    default:
      return JSON.stringify(block);
  }
}

/** whether a text block is the structured content again (compared as parsed JSON, so pretty-printing does not count) */
function carriesStructured(text: string, structured: unknown): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  try {
    return isDeepStrictEqual(JSON.parse(trimmed), structured);
  } catch {
    return false;
  }
}

/**
 * The model text of a tool result: text blocks joined by `\n` (images, audio and binary resources as a placeholder
 * with type and size, never base64), the structured content as JSON when no text block already carries it (compared
 * semantically), `(no output)` when empty. `isError` results are failures. Images are returned beside the text for
 * models that accept them.
 */
export function formatCallResult(wrapper: string, result: CallToolResult): ToolResult {
  const blocks = result.content ?? [];
  const parts = blocks.map(describeBlock);
  let text = parts.join('\n');
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) {
    const json = JSON.stringify(structured);
    const repeated = blocks.some((block) => block.type === 'text' && carriesStructured(block.text, structured));
    if (!repeated) text += `${text ? '\n\n' : ''}Structured content: ${json}`;
  }
  if (text.trim() === '') text = '(no output)';
  const images = blocks.flatMap((block) =>
    block.type === 'image' && typeof block.data === 'string' ? [{ mimeType: block.mimeType, data: block.data }] : [],
  );
  const withImages = (r: ToolResult): ToolResult => (images.length > 0 ? { ...r, images } : r);
  if (result.isError === true) {
    return withImages({ model: truncate(`Error: MCP tool '${wrapper}' reported an error: ${text}`), ok: false });
  }
  return withImages({ model: truncate(text), ok: true });
}

export class McpToolWrapper implements AgentTool {
  readonly parameters: JsonSchemaObject;
  readonly description: string;
  readonly readOnly: boolean;
  readonly mcp: McpToolIdentity;

  constructor(
    readonly name: string,
    readonly server: string,
    readonly tool: McpToolDescriptor,
    private readonly host: McpToolCaller,
  ) {
    this.description = tool.description.trim() !== '' ? tool.description : tool.name;
    this.parameters = normalizeInputSchema(tool.inputSchema);
    this.readOnly = tool.readOnly === true;
    this.mcp = {
      server,
      tool: tool.name,
      readOnly: this.readOnly,
      destructive: tool.annotations?.destructiveHint === true,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
    };
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    return this.host.callTool(this.server, this.tool.name, this.name, args, ctx);
  }
}

export class ToolSearchTool implements AgentTool {
  readonly name = 'tool_search';
  private static readonly BASE_DESCRIPTION =
    'Search the configured MCP servers for tools by keywords (BM25). Matching tools of connected servers are ' +
    'activated for this chat and can be called directly afterwards; tools of servers that are not connected yet ' +
    'need mcp_prepare(server_name) first.';

  /** The deferred built-ins are named here, in one line: the only place an unactivated one costs prompt bytes. */
  get description(): string {
    const deferred = this.host.deferredToolNames();
    if (deferred.length === 0) return ToolSearchTool.BASE_DESCRIPTION;
    return `${ToolSearchTool.BASE_DESCRIPTION} Built-in tools offered on request (search for one, or just call it): ${deferred.join(', ')}.`;
  }
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'keywords describing the capability you need' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: TOOL_SEARCH_MAX_LIMIT,
        description: `maximum number of results (default ${TOOL_SEARCH_DEFAULT_LIMIT})`,
      },
    },
    required: ['query'],
  };
  readonly readOnly = false;

  constructor(private readonly host: McpMetaToolHost) {}

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const query = typeof args['query'] === 'string' ? args['query'].trim() : '';
    if (query === '') return Promise.resolve('Please provide search keywords.');
    const raw = typeof args['limit'] === 'number' ? args['limit'] : Number(args['limit'] ?? TOOL_SEARCH_DEFAULT_LIMIT);
    const limit = Number.isFinite(raw) ? Math.min(TOOL_SEARCH_MAX_LIMIT, Math.max(1, Math.floor(raw))) : TOOL_SEARCH_DEFAULT_LIMIT;
    return this.host.searchTools(ctx.chatId, query, limit);
  }
}

export class McpPrepareTool implements AgentTool {
  readonly name = 'mcp_prepare';
  readonly description =
    'Connect a configured MCP server (by its server_name from tool_search) and activate all of its tools for this chat.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: { server_name: { type: 'string', description: 'the MCP server name, e.g. from a tool_search result' } },
    required: ['server_name'],
  };
  readonly readOnly = false;

  constructor(private readonly host: McpMetaToolHost) {}

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const name = typeof args['server_name'] === 'string' ? args['server_name'].trim() : '';
    if (name === '') return Promise.resolve('Error: server_name must not be empty.');
    return this.host.prepareServer(ctx.chatId, name, ctx.signal);
  }
}

/** characters of one `mcp_read_resource` answer */
export const MAX_RESOURCE_CHARS = 50_000;
/** entries of one `mcp_list_resources` answer */
export const MAX_RESOURCE_ENTRIES = 100;

const SERVER_NAME_PARAM = { type: 'string', description: 'the MCP server name (as in tool names mcp_<server>_…)' };

/** The MCP resource tools are offered once the chat uses an MCP server: activated tools, or connectors selected now. */
function usesMcp(host: McpMetaToolHost, scope: { chatId: string; temporary: ReadonlySet<string> }): boolean {
  return scope.temporary.size > 0 || host.usesMcp(scope.chatId);
}

export class McpListResourcesTool implements AgentTool {
  readonly name = 'mcp_list_resources';
  readonly description =
    'List the resources (files, documents, data) a connected MCP server offers: URI, name and MIME type. Read one ' +
    'with mcp_read_resource. Pass the returned next cursor to see more.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      server_name: SERVER_NAME_PARAM,
      cursor: { type: 'string', description: 'the cursor of a previous answer, for the next page' },
    },
    required: ['server_name'],
  };
  readonly readOnly = true;

  constructor(private readonly host: McpMetaToolHost) {}

  appliesTo(scope: { chatId: string; temporary: ReadonlySet<string> }): boolean {
    return usesMcp(this.host, scope);
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const name = typeof args['server_name'] === 'string' ? args['server_name'].trim() : '';
    if (name === '') return Promise.resolve('Error: server_name must not be empty.');
    const cursor = typeof args['cursor'] === 'string' && args['cursor'] !== '' ? args['cursor'] : undefined;
    return this.host.listResourcesForModel(name, cursor, ctx.signal);
  }
}

export class McpReadResourceTool implements AgentTool {
  readonly name = 'mcp_read_resource';
  readonly description =
    'Read one resource of a connected MCP server by its URI (from mcp_list_resources or a resource link in a tool ' +
    `result). Text comes back (at most ${MAX_RESOURCE_CHARS} characters); binary content as its type and size.`;
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      server_name: SERVER_NAME_PARAM,
      uri: { type: 'string', description: 'the resource URI' },
    },
    required: ['server_name', 'uri'],
  };
  readonly readOnly = true;

  constructor(private readonly host: McpMetaToolHost) {}

  appliesTo(scope: { chatId: string; temporary: ReadonlySet<string> }): boolean {
    return usesMcp(this.host, scope);
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const name = typeof args['server_name'] === 'string' ? args['server_name'].trim() : '';
    const uri = typeof args['uri'] === 'string' ? args['uri'].trim() : '';
    if (name === '') return Promise.resolve('Error: server_name must not be empty.');
    if (uri === '') return Promise.resolve('Error: uri must not be empty.');
    return this.host.readResourceForModel(name, uri, ctx.signal);
  }
}

/** The model text of a `resources/list` page. */
export function formatResourceList(server: string, result: ListResourcesResult): string {
  const resources = result.resources.slice(0, MAX_RESOURCE_ENTRIES);
  if (resources.length === 0) return `The MCP server '${server}' lists no resources.`;
  const lines = resources.map((r) => {
    const details = [r.name, r.mimeType, typeof r.size === 'number' ? formatSize(r.size) : undefined].filter(Boolean);
    return `- ${r.uri} (${details.join(', ')})${r.description ? `: ${r.description.slice(0, 200)}` : ''}`;
  });
  let text = `Resources of '${server}':\n${lines.join('\n')}`;
  if (result.nextCursor) text += `\n\n[more resources: call mcp_list_resources with cursor "${result.nextCursor}"]`;
  else if (result.resources.length > resources.length) text += `\n\n[${result.resources.length - resources.length} more not shown]`;
  return text;
}

/** The model text of a `resources/read` result: texts bounded, blobs as type and size. */
export function formatResourceContents(result: ReadResourceResult): string {
  const parts = result.contents.map((entry) => {
    const content = entry as { uri: string; mimeType?: string; text?: unknown; blob?: unknown };
    const mime = content.mimeType ?? (typeof content.text === 'string' ? 'text/plain' : 'application/octet-stream');
    if (typeof content.text === 'string') return `[resource: ${content.uri} (${mime})]\n${content.text}`;
    const blob = typeof content.blob === 'string' ? content.blob : '';
    return `[resource: ${content.uri} (${mime}, ${formatSize(base64Size(blob))}); binary content is not shown]`;
  });
  const text = parts.length > 0 ? parts.join('\n\n') : '(empty resource)';
  const chars = Array.from(text);
  if (chars.length <= MAX_RESOURCE_CHARS) return text;
  return `${chars.slice(0, MAX_RESOURCE_CHARS).join('')}\n\n[resource truncated, ${chars.length} characters in total]`;
}
