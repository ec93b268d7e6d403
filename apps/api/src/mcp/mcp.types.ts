/**
 * Internal MCP shapes: a server's runtime configuration (built from the merged catalog) and discovered tools.
 */
import type { McpServerStatus, McpToolAnnotations, McpTransportType } from '@cashcode/contracts';

export interface McpServerConfig {
  name: string;
  displayName: string;
  description: string;
  type: McpTransportType;
  builtin: boolean;
  /** stdio: the command (`node` runs the server with this server's own Node binary) */
  command: string;
  /** stdio: arguments; relative paths that exist under the repo root are made absolute */
  args: string[];
  /** stdio: the configured environment (added to a safe baseline) */
  env: Record<string, string>;
  /** stdio: working directory (the repo root unless a user entry sets one) */
  cwd: string;
  /** stdio user entries: the working directory as entered ('' or absent = default) */
  userCwd?: string;
  /** network transports: the endpoint */
  url: string;
  /** network transports: header name → secret value (never returned, logged or put in errors) */
  headers: Record<string, string>;
}

/** A tool as a server describes it (`tools/list`), or as the schema cache keeps it. */
export interface McpToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** `annotations.readOnlyHint === true` */
  readOnly?: boolean;
  /** the display title (`title`, else `annotations.title`) */
  title?: string;
  /** the annotations as declared (only the known hint keys with their declared types) */
  annotations?: McpToolAnnotations;
  /** `execution.taskSupport === "required"`: the tool only runs as a task, which CashCode does not offer */
  taskRequired?: boolean;
}

export interface McpServerState {
  status: McpServerStatus;
  statusError: string | null;
  toolCount: number;
}
