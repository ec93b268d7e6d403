/**
 * The pieces of an MCP connection (mcp-connection.ts) that need no connection: its options, its errors, the reconnect
 * backoff, and the tool descriptors read from a server's `tools/list`.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { sanitizeAnnotations, toolTitle } from './mcp-annotations';
import { errorClassName, type RedactionContext } from './mcp-redaction';
import type { McpServerConfig, McpToolDescriptor } from './mcp.types';
import type { McpTransportFactory } from './mcp-transports';

export const CLIENT_INFO = { name: 'cashcode', version: '0.1.0' } as const;

/** Reconnect backoff of a lost network server: 0.5 s doubling to at most 30 s, each delay with ±25 % jitter. */
export const RECONNECT_BASE_MS = 500;
export const RECONNECT_MAX_MS = 30_000;

/** The delay before reconnect attempt `attempt` (1-based); `random` in [0, 1). */
export function reconnectDelayMs(attempt: number, random: number = Math.random()): number {
  const exponential = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(Math.max(attempt - 1, 0), 16));
  return Math.round(Math.min(RECONNECT_MAX_MS, exponential * (0.75 + 0.5 * random)));
}

/** What a connection is made with; `C` is the connection class (mcp-connection.ts), passed back to the callbacks. */
export interface ConnectionOptions<C> {
  factory: McpTransportFactory;
  connectTimeoutMs: number;
  toolTimeoutMs: number;
  redaction: RedactionContext;
  /** the agent workspace: the single root offered to the server (`roots/list`) */
  workspaceDir: string;
  /** tools changed while connected (tools/list_changed) */
  onToolsChanged(connection: C): void;
  /** the connection was lost (server closed, crashed, stream broke); status is already `error` or `reconnecting` */
  onLost(connection: C): void;
  /** network transports: the OAuth provider of this server */
  authProvider?: (config: McpServerConfig) => OAuthClientProvider | undefined;
  /** true for the SDK's UnauthorizedError: the server needs an OAuth sign-in (status `needs_auth`) */
  isUnauthorized?: (error: unknown) => boolean;
  /** a lost server is connected again by the background reconnect */
  onReconnected?(connection: C): void;
}

/** Raised by a call on a server that is not connected (or was lost during the call). */
export class McpConnectionLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConnectionLostError';
  }
}

export class ConnectTimeoutError extends Error {
  constructor(ms: number) {
    super(`connecting timed out after ${Math.round(ms / 1000)}s`);
    this.name = 'TimeoutError';
  }
}

export class ToolDiscoveryError extends Error {
  constructor(cause: unknown) {
    const name = errorClassName(cause);
    super('tool discovery failed');
    this.name = name;
  }
}

export function toDescriptor(tool: Tool): McpToolDescriptor {
  const annotations = sanitizeAnnotations(tool.annotations);
  const title = toolTitle(tool.title, annotations);
  const descriptor: McpToolDescriptor = {
    name: tool.name,
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
    readOnly: annotations?.readOnlyHint === true,
  };
  if (title !== undefined) descriptor.title = title;
  if (annotations !== undefined) descriptor.annotations = annotations;
  if ((tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport === 'required') descriptor.taskRequired = true;
  return descriptor;
}

/** Transport errors after which the connection is unusable. */
export function isFatalTransportError(error: Error): boolean {
  return (
    errorClassName(error) === 'SseError' ||
    /Maximum reconnection attempts|Failed to reconnect/i.test(error.message)
  );
}

