/**
 * The agent tools of the MCP module: one wrapper per live server tool (`mcp_<server>_<tool>`), and the meta tools
 * `tool_search` and `mcp_prepare` (openspec mcp). The tools only parse arguments and delegate to McpService.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTool, JsonSchemaObject, McpToolIdentity, ToolContext, ToolResult } from '../agent/agent-tool';
import type { McpToolDescriptor } from './mcp.types';
import { normalizeInputSchema } from './mcp-tool-schema';

/** What the tools need from McpService. */
export interface McpToolHost {
  callTool(server: string, original: string, wrapper: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
  searchTools(chatId: string, query: string, limit: number): Promise<string>;
  prepareServer(chatId: string, serverName: string, signal: AbortSignal): Promise<string>;
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

function describeBlock(block: CallToolResult['content'][number]): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case 'resource': {
      const resource = block.resource as { uri: string; text?: unknown };
      return typeof resource.text === 'string' ? resource.text : `[resource: ${resource.uri}]`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    default:
      return JSON.stringify(block);
  }
}

/**
 * The model text of a tool result: text blocks joined by `\n` (other blocks described), the structured content as
 * JSON when the text does not already carry it, `(no output)` when empty. `isError` results are failures.
 */
export function formatCallResult(wrapper: string, result: CallToolResult): ToolResult {
  const parts = (result.content ?? []).map(describeBlock);
  let text = parts.join('\n');
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) {
    const json = JSON.stringify(structured);
    if (!parts.some((part) => part.trim() === json)) text += `${text ? '\n\n' : ''}Structured content: ${json}`;
  }
  if (text.trim() === '') text = '(no output)';
  if (result.isError === true) {
    return { model: truncate(`Error: MCP tool '${wrapper}' reported an error: ${text}`), ok: false };
  }
  return { model: truncate(text), ok: true };
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
    private readonly host: McpToolHost,
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
  readonly description =
    'Search the configured MCP servers for tools by keywords (BM25). Matching tools of connected servers are ' +
    'activated for this chat and can be called directly afterwards; tools of servers that are not connected yet ' +
    'need mcp_prepare(server_name) first.';
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

  constructor(private readonly host: McpToolHost) {}

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

  constructor(private readonly host: McpToolHost) {}

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const name = typeof args['server_name'] === 'string' ? args['server_name'].trim() : '';
    if (name === '') return Promise.resolve('Error: server_name must not be empty.');
    return this.host.prepareServer(ctx.chatId, name, ctx.signal);
  }
}
