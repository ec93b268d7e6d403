/**
 * The MCP transports behind an injection token (CONVENTIONS: external systems are swappable): stdio (our process-group
 * transport on the SDK's framing), SSE and Streamable HTTP (the SDK's clients). Configured headers go with every
 * request of the network transports, and redirects are followed only within the configured origin
 * (`redirectPolicy: 'same-origin'`), so secret headers never reach another origin.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { mcpSdk } from './mcp-sdk';
import type { McpServerConfig } from './mcp.types';
import { StdioProcessTransport } from './stdio-process-transport';

export const MCP_TRANSPORT_FACTORY = Symbol('MCP_TRANSPORT_FACTORY');

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
      });
    case 'streamable_http':
      return new (mcpSdk.streamableHttp().StreamableHTTPClientTransport)(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        redirectPolicy: 'same-origin',
        authProvider: hooks.authProvider,
      });
  }
};
