/**
 * MCP marketplace REST shapes (openspec mcp "Requirement: REST"; `streamable_http` besides `stdio` and `sse`). Header
 * values are never returned: every value is `********` (MCP_MASKED_VALUE); sending it back on update keeps the stored
 * value.
 */

export type McpTransportType = 'stdio' | 'sse' | 'streamable_http';
/** transports a user catalog entry may use (additive: `stdio` runs a program on this machine) */
export type McpUserTransportType = 'stdio' | 'sse' | 'streamable_http';
/**
 * additive: `reconnecting` while a lost network server is retried with backoff; `needs_auth` when the server requires
 * OAuth sign-in (first time, or the stored authorization was refused / revoked)
 */
export type McpServerStatus = 'disconnected' | 'connecting' | 'connected' | 'error' | 'reconnecting' | 'needs_auth';

/** `POST /api/mcp/servers/{name}/oauth/start`: the authorization server's page to open in the browser */
export interface McpOAuthStartResponse {
  authorization_url: string;
}
export type McpToolSource = 'live' | 'cache';

export const MCP_MASKED_VALUE = '********';
export const MCP_USER_TRANSPORTS: readonly McpUserTransportType[] = ['stdio', 'sse', 'streamable_http'];
/** accepted on input as a spelling of `streamable_http` (Claude Code, VS Code) */
export const MCP_HTTP_TYPE_ALIAS = 'http';
/** environment variable names of a stdio entry */
export const MCP_ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MCP_MAX_ENV = 64;
export const MCP_MAX_ARGS = 256;
export const MCP_MAX_HEADERS = 32;
/** RFC 7230 token, 1–128 chars */
export const MCP_HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

export interface McpServerRecord {
  name: string;
  display_name: string;
  description: string;
  type: McpTransportType;
  /** '' for stdio */
  url: string;
  /** header names sorted, values always `********` */
  headers: Record<string, string>;
  builtin: boolean;
  mutable: boolean;
  status: McpServerStatus;
  connected: boolean;
  status_error: string | null;
  tool_count: number;
  /** additive, stdio only: the command and its arguments */
  command?: string;
  args?: string[];
  /** additive, stdio only: variable names sorted, values always `********` */
  env?: Record<string, string>;
  /** additive, stdio only: the working directory */
  cwd?: string;
  /** additive, while `reconnecting`: the attempt number (1 = first retry) and the next retry (ISO 8601) */
  reconnect_attempt?: number;
  next_retry_at?: string;
}

export interface McpServerListResponse {
  servers: McpServerRecord[];
}

export interface CreateMcpServerRequest {
  name: string;
  /** default `sse` */
  type?: McpUserTransportType | 'http';
  /** default: the name */
  display_name?: string;
  description?: string;
  /** network transports */
  url?: string;
  headers?: Record<string, string>;
  /** stdio: the program, its arguments, its environment (secrets: `********` keeps a stored value while command and
   * args are unchanged) and an optional absolute working directory */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export type UpdateMcpServerRequest = Omit<CreateMcpServerRequest, 'name'>;

export interface McpToolRecord {
  /** `mcp_<server>_<tool>` */
  name: string;
  original_name: string;
  description: string;
  input_schema: Record<string, unknown>;
  source: McpToolSource;
  /** true for live tools of a connected server */
  callable: boolean;
  /** additive: the tool's display title (`title`, else `annotations.title`) when the server declares one */
  title?: string;
  /** additive: the behaviour hints the server declared (`tools/list` annotations); absent when none */
  annotations?: McpToolAnnotations;
  /**
   * additive: why a live tool is not callable: `task_required` — the server runs it only as a task
   * (`execution.taskSupport: "required"`), which CashCode does not offer, so the model never sees it
   */
  unavailable_reason?: 'task_required';
}

/** MCP tool annotations (hints from the server, not guarantees). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpServerToolsResponse {
  server: string;
  display_name: string;
  tools: McpToolRecord[];
  source: McpToolSource | 'none';
  status: McpServerStatus;
  status_error: string | null;
  tool_count: number;
}

/** additive: one resource a connected server lists (`resources/list`). */
export interface McpResourceRecord {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mime_type?: string;
  /** bytes, when the server says */
  size?: number;
}

/**
 * additive: `GET /api/mcp/servers/{name}/resources` — the resources of a connected server (first pages, at most
 * 500 entries); empty when the server is not connected or offers no resources.
 */
export interface McpServerResourcesResponse {
  server: string;
  status: McpServerStatus;
  resources: McpResourceRecord[];
  /** true when the server had more resources than listed */
  truncated: boolean;
}

/** `POST /api/mcp/servers/import`: Claude Desktop / Claude Code (`{"mcpServers": …}`) or VS Code (`{"servers": …}`) JSON. */
export interface McpImportRequest {
  config: Record<string, unknown>;
}

export interface McpImportSkipped {
  name: string;
  /** `conflict`, `unsupported_type`, `invalid`, `input_placeholder` */
  reason: 'conflict' | 'unsupported_type' | 'invalid' | 'input_placeholder';
  detail: string;
}

export interface McpImportResponse {
  created: McpServerRecord[];
  skipped: McpImportSkipped[];
}
