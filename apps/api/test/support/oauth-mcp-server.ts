/**
 * A local OAuth-protected MCP server for the OAuth e2e test, built from the SDK's server-side auth helpers: one express
 * app is both the authorization server (mcpAuthRouter over an in-memory OAuthServerProvider: dynamic client
 * registration, an authorize endpoint that auto-approves or denies, authorization-code + PKCE and refresh-token
 * grants) and the protected resource (a stateless Streamable HTTP MCP server behind requireBearerAuth, which answers
 * 401 with the protected-resource metadata URL). The test can expire access tokens, revoke refresh tokens and make
 * the next authorization deny.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InvalidGrantError, InvalidRequestError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

interface IssuedToken {
  clientId: string;
  expiresAt: number;
}

class MemoryClients implements OAuthRegisteredClientsStore {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  getClient(clientId: string): OAuthClientInformationFull | undefined {
    return this.clients.get(clientId);
  }
  registerClient(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>): OAuthClientInformationFull {
    const full = { ...client, client_id: `client-${randomBytes(6).toString('hex')}`, client_id_issued_at: Math.floor(Date.now() / 1000) };
    this.clients.set(full.client_id, full);
    return full;
  }
}

export class TestOAuthProvider implements OAuthServerProvider {
  readonly clientsStore = new MemoryClients();
  readonly codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  readonly accessTokens = new Map<string, IssuedToken>();
  readonly refreshTokens = new Map<string, string>();
  /** the next authorization answers `error=access_denied` */
  denyNext = false;
  refreshCount = 0;

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    if (!client.redirect_uris.includes(params.redirectUri)) throw new InvalidRequestError('Unregistered redirect_uri');
    const target = new URL(params.redirectUri);
    if (this.denyNext) {
      this.denyNext = false;
      target.searchParams.set('error', 'access_denied');
    } else {
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { clientId: client.client_id, params });
      target.searchParams.set('code', code);
    }
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.toString());
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const entry = this.codes.get(code);
    if (!entry) throw new InvalidGrantError('unknown authorization code');
    return entry.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const entry = this.codes.get(code);
    if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('invalid authorization code');
    this.codes.delete(code);
    return this.issue(client.client_id);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    if (this.refreshTokens.get(refreshToken) !== client.client_id) throw new InvalidGrantError('refresh token revoked');
    this.refreshTokens.delete(refreshToken);
    this.refreshCount++;
    return this.issue(client.client_id);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const issued = this.accessTokens.get(token);
    if (!issued || issued.expiresAt < Date.now()) throw new InvalidTokenError('token expired or unknown');
    return { token, clientId: issued.clientId, scopes: [], expiresAt: Math.floor(issued.expiresAt / 1000) };
  }

  /** every access token stops working (the client still believes they are valid) */
  expireAccessTokens(): void {
    for (const token of this.accessTokens.values()) token.expiresAt = 0;
  }

  revokeRefreshTokens(): void {
    this.refreshTokens.clear();
  }

  /** every token value ever issued (to check none leaked into logs or REST) */
  readonly issued: string[] = [];

  private issue(clientId: string): OAuthTokens {
    const access = `at-${randomBytes(16).toString('hex')}`;
    const refresh = `rt-${randomBytes(16).toString('hex')}`;
    this.accessTokens.set(access, { clientId, expiresAt: Date.now() + 3600_000 });
    this.refreshTokens.set(refresh, clientId);
    this.issued.push(access, refresh);
    return { access_token: access, token_type: 'Bearer', expires_in: 3600, refresh_token: refresh };
  }
}

export interface RunningOAuthMcpServer {
  /** the MCP endpoint (Streamable HTTP) */
  url: string;
  provider: TestOAuthProvider;
  stop(): Promise<void>;
}

export async function startOAuthMcpServer(): Promise<RunningOAuthMcpServer> {
  const provider = new TestOAuthProvider();
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const mcpUrl = new URL('/mcp', base);
  app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl, scopesSupported: ['mcp'] }));
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
  app.post('/mcp', express.json(), bearer, async (req, res) => {
    const mcp = new McpServer({ name: 'oauth-test', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says which OAuth client called', inputSchema: { greeting: z.string().optional() } }, (args, extra) => ({
      content: [{ type: 'text', text: `${args.greeting ?? 'hello'} ${extra.authInfo?.clientId ?? 'nobody'}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const notAllowed = (_req: express.Request, res: express.Response) => res.status(405).set('Allow', 'POST').end();
  app.get('/mcp', bearer, notAllowed);
  app.delete('/mcp', bearer, notAllowed);
  return {
    url: mcpUrl.toString(),
    provider,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
