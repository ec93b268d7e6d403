/**
 * The SDK client of one MCP connection (openspec mcp): it offers roots (the agent workspace, "Requirement: Results the
 * model can use") and form elicitation ("Requirement: Elicitation"), answers both, and passes the server's log
 * notifications on; and the paged `tools/list` read when it connects.
 */
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitationAsk, ElicitationOutcome } from '../agent/elicitations';
import { CLIENT_INFO, toDescriptor } from './mcp-connection-parts';
import { mcpSdk } from './mcp-sdk';
import type { McpToolDescriptor } from './mcp.types';

/** at most this many tools/list pages are read (a misbehaving server cannot keep us paging forever) */
const MAX_TOOL_PAGES = 100;

export interface McpClientHooks {
  server: string;
  workspaceDir: string;
  /** who answers an elicitation now (the running call's turn), if anyone */
  elicit(): ((ask: ElicitationAsk) => Promise<ElicitationOutcome>) | undefined;
  /** a log notification of the server (logger name cut to 100 characters) */
  log(level: string, logger: string | undefined, text: string): void;
}

export function createMcpClient(hooks: McpClientHooks): Client {
  const client = new (mcpSdk.client().Client)(CLIENT_INFO, {
    capabilities: { roots: { listChanged: false }, elicitation: { form: {} } },
  });
  const types = mcpSdk.types();
  client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
    const params = request.params as { mode?: unknown; message?: unknown; requestedSchema?: unknown };
    const elicit = hooks.elicit();
    if ((params.mode !== undefined && params.mode !== 'form') || !elicit || typeof params.requestedSchema !== 'object') {
      return { action: 'decline' as const };
    }
    const outcome = await elicit({
      server: hooks.server,
      message: typeof params.message === 'string' ? params.message : '',
      requestedSchema: params.requestedSchema as Record<string, unknown>,
    });
    return outcome.action === 'accept' ? { action: 'accept' as const, content: outcome.content ?? {} } : { action: outcome.action };
  });
  client.setRequestHandler(types.ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(hooks.workspaceDir).href, name: 'workspace' }],
  }));
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (notification) => {
    const { level, logger, data } = notification.params;
    const text = typeof data === 'string' ? data : JSON.stringify(data) ?? '';
    hooks.log(level, typeof logger === 'string' ? logger.slice(0, 100) : undefined, text);
  });
  return client;
}

/** Every tool the server lists, page by page (at most MAX_TOOL_PAGES pages). */
export async function listAllTools(client: Client, timeoutMs: number): Promise<McpToolDescriptor[]> {
  const tools: McpToolDescriptor[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    tools.push(...result.tools.map(toDescriptor));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}
