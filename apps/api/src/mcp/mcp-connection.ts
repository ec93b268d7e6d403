/**
 * One MCP server's connection (openspec mcp): status, the SDK client on a transport from the factory, the discovered
 * tools. Lifecycle operations run one at a time (concurrent connects share one handshake); a server that closes or
 * whose stream breaks while connected becomes `error` with a redacted message, its in-flight calls fail, and connect
 * works again; a lost network server (SSE, Streamable HTTP) is instead `reconnecting` and retried with backoff
 * (reconnectDelayMs) until it is back or disconnected. `tools/list_changed` re-lists the tools.
 */
import type { McpServerStatus } from '@cashcode/contracts';
import { Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, ListResourcesResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolProgressUpdate } from '../agent/agent-tool';
import type { ElicitationAsk, ElicitationOutcome } from '../agent/elicitations';
import { formatEvent } from '../common/log-format';
import type { McpServerConfig, McpToolDescriptor } from './mcp.types';
import { redactMcpError, redactServerText } from './mcp-redaction';
import { mcpSdk } from './mcp-sdk';
import { SerialQueue } from '../common/keyed-queue';
import { createMcpClient, listAllTools } from './mcp-client';
import {
  type ConnectionOptions,
  ConnectTimeoutError,
  isFatalTransportError,
  McpConnectionLostError,
  reconnectDelayMs,
  ToolDiscoveryError,
} from './mcp-connection-parts';

/** disconnect waits this long for a clean close (openspec mcp: 10 s) */
const CLOSE_TIMEOUT_MS = 10_000;
/** a progress message reaches the client with at most this many characters */
const MAX_PROGRESS_MESSAGE_CHARS = 500;
/** a server log notification reaches the server log with at most this many characters */
const MAX_LOG_MESSAGE_CHARS = 2_000;


export class McpConnection {
  private readonly logger = new Logger(McpConnection.name);
  status: McpServerStatus = 'disconnected';
  statusError: string | null = null;
  tools: McpToolDescriptor[] = [];
  /** bumped whenever `tools` changes */
  generation = 0;
  private client: Client | null = null;
  /** connect, disconnect and close one at a time */
  private readonly lane = new SerialQueue();
  private connecting: Promise<void> | null = null;
  private refreshing: Promise<void> | null = null;
  /** the calls in flight, oldest first (elicitations go to the newest) */
  private readonly running: Array<{ elicit?: (ask: ElicitationAsk) => Promise<ElicitationOutcome> }> = [];
  /** while `reconnecting`: the attempt that is scheduled (1-based) and when it runs (epoch ms) */
  reconnectAttempt = 0;
  nextRetryAt: number | null = null;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: ConnectionOptions<McpConnection>,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get connected(): boolean {
    return this.status === 'connected' && this.client !== null;
  }

  /** Connects if needed; never throws — the outcome is in `status` / `statusError`. */
  connect(): Promise<void> {
    if (this.connected) return Promise.resolve();
    this.cancelReconnect();
    this.connecting ??= this.enqueue(() => this.doConnect()).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Closes the connection; status becomes `disconnected` (a close error is reported in statusError). */
  disconnect(): Promise<void> {
    this.cancelReconnect();
    return this.enqueue(async () => {
      this.cancelReconnect();
      const closeError = await this.closeClient();
      this.setTools([]);
      this.status = 'disconnected';
      this.statusError = closeError;
    });
  }

  /** Calls a tool (original name). Rejects on timeout, cancellation, a lost connection or a protocol error. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (update: ToolProgressUpdate) => void,
    elicit?: (ask: ElicitationAsk) => Promise<ElicitationOutcome>,
  ): Promise<CallToolResult> {
    const client = this.requireClient();
    // an elicitation names no request of ours: it goes to the most recent call of this server that is still running
    const asker = { elicit };
    this.running.push(asker);
    try {
      return await this.call(client, name, args, signal, onProgress);
    } finally {
      this.running.splice(this.running.indexOf(asker), 1);
    }
  }

  private async call(
    client: Client,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (update: ToolProgressUpdate) => void,
  ): Promise<CallToolResult> {
    let result;
    try {
      result = await client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.options.toolTimeoutMs,
        resetTimeoutOnProgress: true,
        // asking for progress makes the SDK send a progress token; each notification resets the timeout and is
        // reported to the client (tool_progress)
        onprogress: (progress) => {
          if (!onProgress || typeof progress.progress !== 'number' || !Number.isFinite(progress.progress)) return;
          const update: ToolProgressUpdate = { progress: progress.progress };
          if (typeof progress.total === 'number' && Number.isFinite(progress.total)) update.total = progress.total;
          if (typeof progress.message === 'string') update.message = progress.message.slice(0, MAX_PROGRESS_MESSAGE_CHARS);
          onProgress(update);
        },
        maxTotalTimeout: this.options.toolTimeoutMs * 10,
      });
    } catch (error) {
      // the access token was refused and could not be refreshed (revoked): sign in again
      if (this.client === client && this.options.isUnauthorized?.(error)) this.needsAuth(client);
      throw error;
    }
    return result as CallToolResult;
  }

  /** Whether the server declared the `resources` capability (false when not connected). */
  get offersResources(): boolean {
    return this.client?.getServerCapabilities()?.resources !== undefined;
  }

  /** One page of `resources/list` (empty when the server offers no resources). */
  async listResources(cursor: string | undefined, signal?: AbortSignal): Promise<ListResourcesResult> {
    const client = this.requireClient();
    if (!this.offersResources) return { resources: [] };
    const result = await client.listResources(cursor ? { cursor } : undefined, { signal, timeout: this.options.toolTimeoutMs });
    return result as ListResourcesResult;
  }

  /** `resources/read` of one URI. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = this.requireClient();
    const result = await client.readResource({ uri }, { signal, timeout: this.options.toolTimeoutMs });
    return result as ReadResourceResult;
  }

  // ------------------------------------------------------------------------------------------ internals

  private requireClient(): Client {
    const client = this.client;
    if (!client || this.status !== 'connected') {
      throw new McpConnectionLostError(`the MCP server '${this.name}' is not connected`);
    }
    return client;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    return this.lane.run(task);
  }

  private async doConnect(): Promise<void> {
    if (this.connected) return;
    await this.closeClient();
    this.status = 'connecting';
    this.statusError = null;
    const started = performance.now();
    const client = createMcpClient({
      server: this.name,
      workspaceDir: this.options.workspaceDir,
      elicit: () => this.running.at(-1)?.elicit,
      log: (level, logger, text) =>
        this.logger.log(
          formatEvent('mcp.server.log', {
            server: this.name,
            level,
            ...(logger !== undefined ? { logger } : {}),
            message: redactServerText(text.slice(0, MAX_LOG_MESSAGE_CHARS), this.config, this.options.redaction),
          }),
        ),
    });
    let transport: Transport;
    try {
      transport = this.options.factory(this.config, {
        onStderr: (chars, lines) =>
          this.logger.log(formatEvent('mcp.stdio.stderr', { server: this.name, chars, lines })),
        authProvider: this.config.type === 'stdio' ? undefined : this.options.authProvider?.(this.config),
      });
    } catch (error) {
      this.fail(error);
      return;
    }
    client.onclose = () => this.handleClosed(client);
    client.onerror = (error) => this.handleTransportError(client, error);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ConnectTimeoutError(this.options.connectTimeoutMs)), this.options.connectTimeoutMs);
    });
    try {
      await Promise.race([client.connect(transport, { timeout: this.options.connectTimeoutMs }), deadline]);
      let tools: McpToolDescriptor[];
      try {
        tools = await Promise.race([listAllTools(client, this.options.connectTimeoutMs), deadline]);
      } catch (error) {
        throw error instanceof ConnectTimeoutError ? error : new ToolDiscoveryError(error);
      }
      client.setNotificationHandler(mcpSdk.types().ToolListChangedNotificationSchema, () => {
        void this.refreshTools(client);
      });
      this.client = client;
      this.status = 'connected';
      this.statusError = null;
      this.setTools(tools);
      this.logger.log(
        formatEvent('mcp.server.connected', {
          server: this.name,
          transport: this.config.type,
          tools: tools.length,
          duration_ms: Math.round(performance.now() - started),
        }),
      );
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      this.fail(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records a refusal or failure of the OAuth sign-in (status `needs_auth`, connection closed). */
  markNeedsAuth(message: string): void {
    const client = this.client;
    if (client) this.needsAuth(client, message);
    else {
      this.status = 'needs_auth';
      this.statusError = message;
      this.setTools([]);
    }
  }

  private needsAuth(client: Client, message = 'sign-in required: the authorization expired or was revoked'): void {
    this.lost(client, message);
    // a refused authorization is not a lost network: it waits for the user's sign-in, not for a retry
    this.cancelReconnect();
    this.status = 'needs_auth';
  }

  private fail(error: unknown): void {
    if (this.options.isUnauthorized?.(error)) {
      this.status = 'needs_auth';
      this.statusError = 'sign-in required';
      this.setTools([]);
      this.logger.log(formatEvent('mcp.server.needs_auth', { server: this.name }));
      return;
    }
    this.status = 'error';
    this.statusError = redactMcpError(error, this.config, this.options.redaction);
    this.setTools([]);
    this.logger.warn(formatEvent('mcp.server.connect_failed', { server: this.name, error: this.statusError }));
  }

  private refreshTools(client: Client): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const tools = await listAllTools(client, this.options.connectTimeoutMs);
        if (this.client !== client) return;
        this.setTools(tools);
        this.logger.log(formatEvent('mcp.server.tools_changed', { server: this.name, tools: tools.length }));
        this.options.onToolsChanged(this);
      } catch (error) {
        this.logger.warn(
          formatEvent('mcp.server.tools_refresh_failed', {
            server: this.name,
            error: redactMcpError(error, this.config, this.options.redaction),
          }),
        );
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private setTools(tools: McpToolDescriptor[]): void {
    this.tools = tools;
    this.generation++;
  }

  /** Closes the current client (if any) without reporting it as lost; returns a redacted close error. */
  private async closeClient(): Promise<string | null> {
    const client = this.client;
    this.client = null;
    if (!client) return null;
    client.onclose = undefined;
    client.onerror = undefined;
    try {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        client.close(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('closing timed out after 10s')), CLOSE_TIMEOUT_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      return null;
    } catch (error) {
      return redactMcpError(error, this.config, this.options.redaction);
    }
  }

  private handleClosed(client: Client): void {
    if (this.client !== client) return;
    this.lost(client, 'ConnectionClosed: the MCP server closed the connection');
  }

  private handleTransportError(client: Client, error: Error): void {
    const message = redactMcpError(error, this.config, this.options.redaction);
    if (this.client === client && isFatalTransportError(error)) {
      this.lost(client, message);
      return;
    }
    this.logger.debug(formatEvent('mcp.transport.error', { server: this.name, error: message }));
  }

  private lost(client: Client, message: string): void {
    this.client = null;
    client.onclose = undefined;
    client.onerror = undefined;
    this.status = 'error';
    this.statusError = message;
    this.setTools([]);
    this.logger.warn(formatEvent('mcp.server.lost', { server: this.name, error: message }));
    // rejects the in-flight requests and ends the transport (kills a stdio server's process group); deferred so that
    // a transport reporting the error from inside its own handler (EventSource) finishes that handler first
    queueMicrotask(() => void client.close().catch(() => undefined));
    if (this.config.type !== 'stdio') this.scheduleReconnect(1);
    this.options.onLost(this);
  }

  /** Stops a pending background reconnect (connect, disconnect). */
  private cancelReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.reconnectAttempt = 0;
    this.nextRetryAt = null;
  }

  private scheduleReconnect(attempt: number): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const delay = reconnectDelayMs(attempt);
    this.status = 'reconnecting';
    this.reconnectAttempt = attempt;
    this.nextRetryAt = Date.now() + delay;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.enqueue(async () => {
        if (this.status !== 'reconnecting' || this.reconnectAttempt !== attempt) return;
        const error = this.statusError;
        await this.doConnect();
        if (this.connected) {
          this.reconnectAttempt = 0;
          this.nextRetryAt = null;
          this.logger.log(formatEvent('mcp.server.reconnected', { server: this.name, attempt }));
          this.options.onReconnected?.(this);
        } else if ((this.status as McpServerStatus) === 'needs_auth') {
          // the server now wants a sign-in: retrying cannot help until the user signs in
          this.cancelReconnect();
        } else {
          // status_error is the latest attempt's error (the loss itself when the attempt reported none)
          this.statusError ??= error;
          this.scheduleReconnect(attempt + 1);
        }
      });
    }, delay);
    this.reconnectTimer.unref();
  }
}
