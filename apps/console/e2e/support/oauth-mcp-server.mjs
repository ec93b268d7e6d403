/* global URL */
// A local OAuth-protected MCP server for the browser e2e (the JavaScript twin of apps/api/test/support/oauth-mcp-server.ts,
// reduced to the happy path): the SDK's mcpAuthRouter over an in-memory provider that auto-approves, and a stateless
// Streamable HTTP MCP server with one tool behind requireBearerAuth.
import { randomBytes } from 'node:crypto';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

export async function startOAuthMcpServer() {
  const clients = new Map();
  const codes = new Map();
  const tokens = new Map();
  const provider = {
    clientsStore: {
      getClient: (id) => clients.get(id),
      registerClient: (client) => {
        const full = { ...client, client_id: `client-${randomBytes(6).toString('hex')}`, client_id_issued_at: Math.floor(Date.now() / 1000) };
        clients.set(full.client_id, full);
        return full;
      },
    },
    async authorize(client, params, res) {
      const code = randomBytes(16).toString('hex');
      codes.set(code, params);
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      res.redirect(target.toString());
    },
    async challengeForAuthorizationCode(_client, code) {
      if (!codes.has(code)) throw new InvalidGrantError('unknown code');
      return codes.get(code).codeChallenge;
    },
    async exchangeAuthorizationCode(client, code) {
      if (!codes.delete(code)) throw new InvalidGrantError('unknown code');
      const access = `at-${randomBytes(16).toString('hex')}`;
      tokens.set(access, client.client_id);
      return { access_token: access, token_type: 'Bearer', expires_in: 3600 };
    },
    async exchangeRefreshToken() {
      throw new InvalidGrantError('no refresh in this server');
    },
    async verifyAccessToken(token) {
      if (!tokens.has(token)) throw new InvalidTokenError('unknown token');
      return { token, clientId: tokens.get(token), scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    },
  };
  const app = express();
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = new URL(`http://127.0.0.1:${server.address().port}`);
  const mcpUrl = new URL('/mcp', base);
  app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl }));
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
  app.post('/mcp', express.json(), bearer, async (req, res) => {
    const mcp = new McpServer({ name: 'oauth-test', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says which OAuth client called' }, (extra) => ({
      content: [{ type: 'text', text: `hello ${extra.authInfo?.clientId ?? 'nobody'}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.get('/mcp', bearer, (_req, res) => res.status(405).end());
  app.delete('/mcp', bearer, (_req, res) => res.status(405).end());
  return {
    url: mcpUrl.toString(),
    stop: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
