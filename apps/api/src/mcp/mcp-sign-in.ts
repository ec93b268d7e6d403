/**
 * OAuth sign-in of a network MCP server as the console drives it: start (a fresh authorization URL), the browser's
 * callback (connects the server after a successful sign-in, marks it as needing a sign-in otherwise) and sign-out.
 * The OAuth client itself (tokens, registration, PKCE) is McpOAuth's (oauth/mcp-oauth.ts).
 */
import { Injectable } from '@nestjs/common';
import type { McpServerRecord } from '@cashcode/contracts';
import { McpCatalog } from './mcp-catalog';
import { McpConnections } from './mcp-connections';
import { redactMcpError } from './mcp-redaction';
import { McpServers } from './mcp-servers';
import { McpError } from './mcp.errors';
import { type CallbackOutcome, McpOAuth } from './oauth/mcp-oauth';

@Injectable()
export class McpSignIn {
  constructor(
    private readonly catalog: McpCatalog,
    private readonly servers: McpServers,
    private readonly connections: McpConnections,
    private readonly oauth: McpOAuth,
  ) {}

  /** "Sign in": a fresh authorization URL for a network server (stored tokens are dropped first). */
  async start(name: string): Promise<{ authorization_url: string }> {
    const server = this.servers.known(name);
    if (server.type === 'stdio') throw new McpError('validation', 'OAuth sign-in is for SSE and Streamable HTTP servers', 'name');
    await this.connections.disconnect(server);
    try {
      return { authorization_url: await this.oauth.start(server) };
    } catch (error) {
      throw new McpError(
        'connection',
        `Unable to start the sign-in for ${name}: ${redactMcpError(error, server, this.connections.redaction)}`,
      );
    }
  }

  /** The browser's return from the authorization server; connects the server after a successful sign-in. */
  async callback(query: Record<string, unknown>): Promise<CallbackOutcome> {
    const outcome = await this.oauth.complete(query, (name) => this.catalog.get(name));
    if (outcome.server === null) return outcome;
    const server = this.catalog.get(outcome.server)!;
    if (!outcome.ok) {
      this.connections.connectionFor(server).markNeedsAuth(outcome.message);
      this.connections.emitChanged(server.name, 'error');
      return outcome;
    }
    await this.connections.connect(server);
    return outcome;
  }

  /** "Sign out": disconnects and deletes the stored tokens and client registration. */
  async signOut(name: string): Promise<McpServerRecord> {
    const server = this.servers.known(name);
    await this.connections.disconnect(server);
    await this.oauth.signOut(name);
    return this.servers.record(server);
  }
}
