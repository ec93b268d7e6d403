/**
 * The MCP transports behind an injection token (CONVENTIONS: external systems are swappable): stdio (our process-group
 * transport on the SDK's framing), SSE and Streamable HTTP (the SDK's clients). Configured headers go with every
 * request of the network transports, and redirects are followed only within the configured origin
 * (`redirectPolicy: 'same-origin'`), so secret headers never reach another origin. The network transports fetch
 * through one undici Agent without a body timeout (MCP_STREAM_DISPATCHER_OPTIONS): an SSE or Streamable HTTP stream
 * that stays silent for minutes is idle, not broken (the default 300 s body timeout dropped idle SSE connections).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { mcpSdk } from './mcp-sdk';
import type { McpServerConfig } from './mcp.types';
import { StdioProcessTransport } from './stdio-process-transport';

export const MCP_TRANSPORT_FACTORY = Symbol('MCP_TRANSPORT_FACTORY');

/**
 * The dispatcher of the network transports: no body timeout (streams may stay idle indefinitely; a dead peer is
 * noticed when the TCP connection closes, and a tool call has its own timeout), headers within 60 s.
 */
export const MCP_STREAM_DISPATCHER_OPTIONS = { bodyTimeout: 0, headersTimeout: 60_000 } as const;

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;
let streamAgent: import('undici').Agent | undefined;

/** The Agent behind mcpFetch (created on first use). */
export function mcpStreamAgent(): import('undici').Agent {
  streamAgent ??= new (mcpSdk.undici().Agent)(MCP_STREAM_DISPATCHER_OPTIONS);
  return streamAgent;
}

/** fetch for the SDK transports: undici's fetch on mcpStreamAgent(). */
export const mcpFetch: FetchLike = (url, init) =>
  mcpSdk.undici().fetch(url, { ...(init as object), dispatcher: mcpStreamAgent() }) as unknown as Promise<Response>;

export interface TransportHooks {
  /** stdio: stderr activity (metadata only) */
  onStderr(chars: number, lines: number): void;
  /** network transports: OAuth sign-in and tokens for this server (oauth/mcp-oauth.ts) */
  authProvider?: OAuthClientProvider;
}

export type McpTransportFactory = (config: McpServerConfig, hooks: TransportHooks) => Transport;

export const defaultTransportFactory: McpTransportFactory = (config, hooks) => {
  switch (config.type) {
    case 'stdio':
      return new StdioProcessTransport({
        // `node` runs the server with the Node binary running CashCode (no PATH lookup needed)
        command: config.command === 'node' ? process.execPath : config.command,
        args: config.args,
        env: config.env,
        cwd: config.cwd,
        onStderr: hooks.onStderr,
      });
    case 'sse':
      return new (mcpSdk.sse().SSEClientTransport)(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        redirectPolicy: 'same-origin',
        authProvider: hooks.authProvider,
        fetch: mcpFetch,
      });
    case 'streamable_http':
      return new (mcpSdk.streamableHttp().StreamableHTTPClientTransport)(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        redirectPolicy: 'same-origin',
        authProvider: hooks.authProvider,
        fetch: mcpFetch,
      });
  }
};
