/**
 * OAuth 2.1 for remote MCP servers, on the SDK's client auth (`auth()`: protected-resource and authorization-server
 * metadata discovery, dynamic client registration, PKCE, refresh). McpOAuth hands each network transport an
 * OAuthClientProvider for its server; credentials live in McpOAuthStore (0600, bound to the URL origin).
 *
 * A sign-in is a pending flow keyed by its `state`: 32 random bytes, single-use (taken on the first callback that
 * names it), valid for FLOW_TTL_MS and tied to the server entry (name and URL origin) it was started for. The PKCE
 * verifier stays in memory with the flow. The callback route needs no API token (the browser comes back from the
 * authorization server without it); the state is what binds it.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { API_PATHS } from '@cashcode/contracts';
import { formatEvent } from '../../common/log-format';
import { trimTrailing } from '../../common/trim';
import { urlSecretBinding } from '../../common/secret-binding';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { McpServerConfig } from '../mcp.types';
import { McpOAuthStore } from './mcp-oauth-store';

/** a pending sign-in is valid this long */
export const FLOW_TTL_MS = 10 * 60_000;
/** at most this many pending sign-ins are kept (the oldest are dropped) */
const MAX_FLOWS = 100;

interface PendingFlow {
  server: string;
  binding: string | null;
  expiresAt: number;
  verifier?: string;
}

export type CallbackOutcome =
  | { ok: true; server: string }
  | { ok: false; server: string | null; reason: 'invalid_state' | 'denied' | 'failed'; message: string };

// eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy like mcp-sdk.ts
const clientAuth = (): typeof import('@modelcontextprotocol/sdk/client/auth.js') => require('@modelcontextprotocol/sdk/client/auth.js');

/** True for the SDK's UnauthorizedError (sign-in needed: no tokens, or refresh refused). */
export function isUnauthorizedError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'UnauthorizedError' || error instanceof clientAuth().UnauthorizedError);
}

@Injectable()
export class McpOAuth {
  private readonly logger = new Logger(McpOAuth.name);
  readonly store: McpOAuthStore;
  private readonly flows = new Map<string, PendingFlow>();
  /** server → the authorization URL of its latest sign-in attempt */
  private readonly authorizationUrls = new Map<string, string>();

  /** the clock (tests move it to expire flows) */
  now: () => number = Date.now;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.store = new McpOAuthStore(config.mcpOAuthDir);
  }

  redirectUri(): string {
    const base =
      this.config.publicUrl ??
      `http://${['0.0.0.0', '::', ''].includes(this.config.host) ? '127.0.0.1' : this.config.host.includes(':') ? `[${this.config.host}]` : this.config.host}:${this.config.port}`;
    return `${trimTrailing(base, '/')}${API_PATHS.mcpOAuthCallback}`;
  }

  /** The provider a network transport of `server` authenticates with. */
  provider(server: McpServerConfig, flow?: PendingFlow): OAuthClientProvider {
    const store = this.store;
    const redirectUri = this.redirectUri();
    let lastState: string | null = null;
    const metadata: OAuthClientMetadata = {
      client_name: 'CashCode',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    return {
      get redirectUrl() {
        return redirectUri;
      },
      clientMetadata: metadata,
      state: () => {
        lastState = this.newFlow(server);
        return lastState;
      },
      clientInformation: async (): Promise<OAuthClientInformationMixed | undefined> => {
        const record = await store.read(server.name, server.url);
        // a client registered for another redirect URI (the port or public URL changed) is registered again
        return record.redirect_uri === redirectUri ? record.client : undefined;
      },
      saveClientInformation: (client: OAuthClientInformationMixed) =>
        store.update(server.name, server.url, (record) => {
          record.client = client;
          record.redirect_uri = redirectUri;
        }),
      tokens: async (): Promise<OAuthTokens | undefined> => (await store.read(server.name, server.url)).tokens,
      saveTokens: async (tokens: OAuthTokens) => {
        await store.update(server.name, server.url, (record) => {
          record.tokens = tokens;
        });
        this.logger.log(formatEvent('mcp.oauth.tokens_saved', { server: server.name, refreshable: tokens.refresh_token !== undefined }));
      },
      redirectToAuthorization: (url: URL) => {
        this.authorizationUrls.set(server.name, url.toString());
      },
      saveCodeVerifier: (verifier: string) => {
        const pending = lastState === null ? undefined : this.flows.get(lastState);
        if (pending) pending.verifier = verifier;
      },
      codeVerifier: () => {
        if (!flow?.verifier) throw new Error('no pending sign-in');
        return flow.verifier;
      },
      invalidateCredentials: (scope) =>
        store.update(server.name, server.url, (record) => {
          if (scope === 'all' || scope === 'tokens') delete record.tokens;
          if (scope === 'all' || scope === 'client') {
            delete record.client;
            delete record.redirect_uri;
          }
        }),
    };
  }

  /** Starts a fresh sign-in (stored tokens are dropped first); resolves with the URL to open. */
  async start(server: McpServerConfig): Promise<string> {
    await this.store.update(server.name, server.url, (record) => {
      delete record.tokens;
    });
    this.authorizationUrls.delete(server.name);
    const result = await clientAuth().auth(this.provider(server), { serverUrl: server.url });
    const url = this.authorizationUrls.get(server.name);
    if (result !== 'REDIRECT' || !url) throw new Error('the authorization server did not ask for a sign-in');
    this.logger.log(formatEvent('mcp.oauth.started', { server: server.name }));
    return url;
  }

  /**
   * The callback: takes the flow named by `state` (single use), checks it is unexpired and still matches the
   * server entry, then exchanges the code (or records the refusal). `lookup` finds the current entry by name.
   */
  async complete(
    query: { state?: unknown; code?: unknown; error?: unknown },
    lookup: (name: string) => McpServerConfig | undefined,
  ): Promise<CallbackOutcome> {
    const state = typeof query.state === 'string' ? query.state : '';
    const flow = state === '' ? undefined : this.flows.get(state);
    if (flow) this.flows.delete(state);
    const server = flow ? lookup(flow.server) : undefined;
    if (!flow || flow.expiresAt <= this.now() || !server || urlSecretBinding(server.url) !== flow.binding) {
      this.logger.warn(formatEvent('mcp.oauth.callback_rejected', { reason: 'invalid_state' }));
      return { ok: false, server: null, reason: 'invalid_state', message: 'This sign-in link is invalid, expired or already used. Start the sign-in again from the console.' };
    }
    if (typeof query.error === 'string' && query.error !== '') {
      const code = /^[a-z_]{1,64}$/.test(query.error) ? query.error : 'error';
      this.logger.warn(formatEvent('mcp.oauth.denied', { server: server.name, error: code }));
      return { ok: false, server: server.name, reason: 'denied', message: `the authorization server refused the sign-in (${code})` };
    }
    if (typeof query.code !== 'string' || query.code === '') {
      return { ok: false, server: server.name, reason: 'failed', message: 'the authorization server sent no code' };
    }
    try {
      const result = await clientAuth().auth(this.provider(server, flow), { serverUrl: server.url, authorizationCode: query.code });
      if (result !== 'AUTHORIZED') throw new Error('not authorized');
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      this.logger.warn(formatEvent('mcp.oauth.exchange_failed', { server: server.name, error: name }));
      return { ok: false, server: server.name, reason: 'failed', message: `the code exchange failed (${name})` };
    }
    this.logger.log(formatEvent('mcp.oauth.signed_in', { server: server.name }));
    return { ok: true, server: server.name };
  }

  /** Sign out: deletes the stored tokens and client registration; pending flows of the server end. */
  async signOut(server: string): Promise<boolean> {
    for (const [state, flow] of this.flows) if (flow.server === server) this.flows.delete(state);
    this.authorizationUrls.delete(server);
    const removed = await this.store.remove(server);
    this.logger.log(formatEvent('mcp.oauth.signed_out', { server, removed }));
    return removed;
  }

  async hasTokens(server: McpServerConfig): Promise<boolean> {
    return (await this.store.read(server.name, server.url)).tokens !== undefined;
  }

  private newFlow(server: McpServerConfig): string {
    const now = this.now();
    for (const [key, flow] of this.flows) if (flow.expiresAt <= now) this.flows.delete(key);
    while (this.flows.size >= MAX_FLOWS) this.flows.delete(this.flows.keys().next().value as string);
    const state = randomBytes(32).toString('base64url');
    this.flows.set(state, { server: server.name, binding: urlSecretBinding(server.url), expiresAt: now + FLOW_TTL_MS });
    return state;
  }
}
