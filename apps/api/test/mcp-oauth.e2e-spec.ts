/**
 * OAuth for remote MCP servers, end to end: a real local authorization server + protected Streamable HTTP MCP server
 * (support/oauth-mcp-server.ts, the SDK's server-side auth helpers) and the SDK's client auth inside CashCode. The app
 * runs with an API token; the callback is reached without it, the way a browser comes back from the authorization
 * server. The authorization URL is followed with a real HTTP client (the test AS auto-approves).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { McpServerRecord } from '@cashcode/contracts';
import { ToolRegistry, type ToolScope } from '../src/agent/tool-registry';
import type { ToolContext } from '../src/agent/agent-tool';
import { McpOAuth, FLOW_TTL_MS } from '../src/mcp/oauth/mcp-oauth';
import type { McpServerConfig } from '../src/mcp/mcp.types';
import { startOAuthMcpServer, type RunningOAuthMcpServer } from './support/oauth-mcp-server';
import { startTestApp, type TestApp } from './support/test-app';

const TOKEN = 'api-token-oauth-e2e-4d1f';
const NAME = 'oauth_http';
const TOOL = `mcp_${NAME}_whoami`;

describe('MCP OAuth (e2e)', () => {
  let app: TestApp;
  let as: RunningOAuthMcpServer;
  let registry: ToolRegistry;
  let oauth: McpOAuth;

  const api = () => ({
    get: (path: string) => request(app.httpUrl).get(path).set('Authorization', `Bearer ${TOKEN}`),
    post: (path: string) => request(app.httpUrl).post(path).set('Authorization', `Bearer ${TOKEN}`),
    put: (path: string) => request(app.httpUrl).put(path).set('Authorization', `Bearer ${TOKEN}`),
  });
  const record = async (): Promise<McpServerRecord> =>
    ((await api().get('/api/mcp/servers')).body as { servers: McpServerRecord[] }).servers.find((s) => s.name === NAME)!;
  const ctx = (): ToolContext => ({ chatId: 'oauth-chat', turnId: 'b'.repeat(32), signal: new AbortController().signal });
  const scope = (): ToolScope => ({ chatId: 'oauth-chat', temporary: new Set([TOOL]) });
  const call = () => registry.execute(TOOL, JSON.stringify({ greeting: 'hi' }), ctx(), scope());
  const tokensFile = () => oauth.store.file(NAME);
  const exists = (file: string) => fs.stat(file).then(() => true, () => false);

  /** start → follow the authorization URL (the AS redirects to our callback) → the callback URL, not yet visited */
  const authorize = async (): Promise<string> => {
    const start = await api().post(`/api/mcp/servers/${NAME}/oauth/start`);
    expect(start.status).toBe(200);
    const authorizationUrl = new URL(start.body.authorization_url as string);
    expect(authorizationUrl.origin).toBe(new URL(as.url).origin);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${app.httpUrl}/api/mcp/oauth/callback`);
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${app.httpUrl}/api/mcp/oauth/callback?`)).toBe(true);
    return location;
  };
  /** the browser's visit of the callback: no API token */
  const visit = (url: string) => fetch(url).then(async (res) => ({ status: res.status, text: await res.text() }));

  beforeAll(async () => {
    as = await startOAuthMcpServer();
    app = await startTestApp({ env: { CASHCODE_API_TOKEN: TOKEN } });
    registry = app.app.get(ToolRegistry, { strict: false });
    oauth = app.app.get(McpOAuth, { strict: false });
    const created = await api()
      .post('/api/mcp/servers')
      .send({ name: NAME, type: 'streamable_http', display_name: 'OAuth HTTP', url: as.url });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await as?.stop();
  });

  it('Scenario: a server answering 401 with OAuth metadata needs a sign-in', async () => {
    const res = await api().post(`/api/mcp/servers/${NAME}/connect`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('needs_auth');
    expect(res.body.connected).toBe(false);
    expect(await exists(tokensFile())).toBe(true); // the dynamic client registration, no tokens yet
    expect(JSON.parse(await fs.readFile(tokensFile(), 'utf8')).tokens).toBeUndefined();
  });

  it('Scenario: a callback without a valid state is refused and stores no token', async () => {
    const callbackUrl = await authorize();
    const good = new URL(callbackUrl);
    const missing = new URL(good);
    missing.searchParams.delete('state');
    const forged = new URL(good);
    forged.searchParams.set('state', 'A'.repeat(43));
    for (const url of [missing, forged]) {
      const res = await visit(url.toString());
      expect(res.status).toBe(400);
      expect(res.text).toContain('invalid, expired or already used');
    }
    // the callback is exempt from the token for GET only
    expect((await request(app.httpUrl).post('/api/mcp/oauth/callback').query({ state: 'x' })).status).toBe(401);
    // an expired state: the same flow visited after its lifetime
    const realNow = oauth.now;
    oauth.now = () => realNow() + FLOW_TTL_MS + 1000;
    try {
      expect((await visit(good.toString())).status).toBe(400);
    } finally {
      oauth.now = realNow;
    }
    // it was taken by that (expired) visit: reusing it fails too
    expect((await visit(good.toString())).status).toBe(400);
    expect(JSON.parse(await fs.readFile(tokensFile(), 'utf8')).tokens).toBeUndefined();
    expect((await record()).status).not.toBe('connected');
  });

  it('Scenario: a refused authorization shows in the status', async () => {
    as.provider.denyNext = true;
    const callbackUrl = await authorize();
    expect(new URL(callbackUrl).searchParams.get('error')).toBe('access_denied');
    const res = await visit(callbackUrl);
    expect(res.status).toBe(400);
    expect(res.text).toContain('access_denied');
    const server = await record();
    expect(server.status).toBe('needs_auth');
    expect(server.status_error).toContain('access_denied');
    expect(JSON.parse(await fs.readFile(tokensFile(), 'utf8')).tokens).toBeUndefined();
  });

  it('Scenario: signing in connects the server and its tools work', async () => {
    const callbackUrl = await authorize();
    const res = await visit(callbackUrl);
    expect(res.status).toBe(200);
    expect(res.text).toContain('return to the CashCode console');
    const server = await record();
    expect(server.status).toBe('connected');
    expect(server.tool_count).toBe(1);
    const result = await call();
    expect(result.ok).toBe(true);
    expect(result.model).toContain('hi client-');
    // the same state cannot be used twice
    expect((await visit(callbackUrl)).status).toBe(400);
    expect((await record()).status).toBe('connected');
  });

  it('Scenario: OAuth tokens are stored 0600 and appear in no response and no log line', async () => {
    const stat = await fs.stat(tokensFile());
    expect(stat.mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await fs.readFile(tokensFile(), 'utf8'));
    expect(as.provider.issued).toContain(stored.tokens.access_token);
    const list = JSON.stringify((await api().get('/api/mcp/servers')).body);
    const tools = JSON.stringify((await api().get(`/api/mcp/servers/${NAME}/tools`)).body);
    let logs = '';
    for (const file of await fs.readdir(app.config.logDir)) logs += await fs.readFile(join(app.config.logDir, file), 'utf8');
    expect(logs).toContain('mcp.oauth.signed_in');
    for (const token of as.provider.issued) {
      expect(list).not.toContain(token);
      expect(tools).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });

  it('Scenario: an expired access token is refreshed automatically', async () => {
    const before = JSON.parse(await fs.readFile(tokensFile(), 'utf8')).tokens.access_token as string;
    as.provider.expireAccessTokens();
    const result = await call();
    expect(result.ok).toBe(true);
    expect(as.provider.refreshCount).toBe(1);
    const after = JSON.parse(await fs.readFile(tokensFile(), 'utf8')).tokens.access_token as string;
    expect(after).not.toBe(before);
    expect((await record()).status).toBe('connected');
  });

  it('Scenario: a revoked authorization asks for a new sign-in', async () => {
    as.provider.revokeRefreshTokens();
    as.provider.expireAccessTokens();
    const result = await call();
    expect(result.ok).toBe(false);
    const server = await record();
    expect(server.status).toBe('needs_auth');
    expect(server.status_error).toContain('sign-in required');
  });

  it('Scenario: signing out deletes the stored tokens', async () => {
    await visit(await authorize());
    expect((await record()).status).toBe('connected');
    const res = await api().post(`/api/mcp/servers/${NAME}/oauth/sign-out`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('disconnected');
    expect(await exists(tokensFile())).toBe(false);
    const again = await api().post(`/api/mcp/servers/${NAME}/connect`);
    expect(again.body.status).toBe('needs_auth');
  });

  it('Scenario: a changed URL origin drops the stored OAuth credentials', async () => {
    await visit(await authorize());
    expect(await oauth.hasTokens({ name: NAME, url: as.url } as McpServerConfig)).toBe(true);
    const moved = as.url.replace('127.0.0.1', 'localhost');
    const res = await api()
      .put(`/api/mcp/servers/${NAME}`)
      .send({ type: 'streamable_http', display_name: 'OAuth HTTP', url: moved });
    expect(res.status).toBe(200);
    expect(await oauth.hasTokens({ name: NAME, url: moved } as McpServerConfig)).toBe(false);
    expect(await exists(tokensFile())).toBe(false);
  });
});
