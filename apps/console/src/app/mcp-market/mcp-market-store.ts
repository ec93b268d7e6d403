import { Injectable, computed, inject, signal } from '@angular/core';
import type { McpServerRecord, McpServerResourcesResponse, McpServerToolsResponse } from '@cashcode/contracts';

import { errorMessage } from '../core/api/api-error';
import { McpApi } from './mcp-api';
import { buildRequest, mapServerError, type McpServerDraft, type ServerErrors } from './mcp-server-form';

export type McpAction = 'connect' | 'disconnect' | 'delete' | 'sign_in' | 'sign_out';

/** after "Sign in" the list is reloaded this often until the server leaves `needs_auth` (at most SIGN_IN_WAIT_MS) */
const SIGN_IN_POLL_MS = 1500;
const SIGN_IN_WAIT_MS = 10 * 60_000;

/** State of the MCP Market: the servers, the running lifecycle action and per-row errors. */
@Injectable()
export class McpMarketStore {
  private readonly api = inject(McpApi);

  private readonly list = signal<McpServerRecord[]>([]);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly running = signal<{ name: string; action: McpAction } | null>(null);
  private readonly errors = signal<Record<string, string>>({});

  readonly servers = this.list.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly pending = this.running.asReadonly();
  readonly rowErrors = this.errors.asReadonly();
  readonly busy = computed(() => this.running() !== null);

  async load(): Promise<void> {
    this.loadFailure.set(null);
    if (this.list().length === 0) this.loadingFlag.set(true);
    try {
      this.list.set(await this.api.list());
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  /** Connect, or disconnect a connected server; the list is reloaded afterwards. */
  async toggle(server: McpServerRecord): Promise<void> {
    const action: McpAction = server.connected ? 'disconnect' : 'connect';
    await this.run(server.name, action, async () => {
      if (action === 'connect') {
        this.patch(server.name, { status: 'connecting', status_error: null });
        await this.api.connect(server.name);
      } else {
        await this.api.disconnect(server.name);
      }
    });
  }

  /**
   * OAuth "Sign in": opens the authorization server's page in a new tab; the API's callback connects the server,
   * and the list is reloaded until the server is no longer waiting for the sign-in.
   */
  async signIn(server: McpServerRecord): Promise<void> {
    let opened = false;
    await this.run(server.name, 'sign_in', async () => {
      const { authorization_url } = await this.api.oauthStart(server.name);
      window.open(authorization_url, '_blank', 'noopener');
      opened = true;
    });
    if (!opened) return;
    const deadline = Date.now() + SIGN_IN_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, SIGN_IN_POLL_MS));
      await this.load();
      const current = this.list().find((s) => s.name === server.name);
      if (!current || current.connected || (current.status === 'needs_auth' && current.status_error !== 'sign-in required')) return;
    }
  }

  /** OAuth "Sign out": disconnects and deletes the stored tokens (nothing to delete for a server without OAuth). */
  async signOut(name: string): Promise<void> {
    await this.run(name, 'sign_out', () => this.api.oauthSignOut(name));
  }

  async remove(name: string): Promise<void> {
    await this.run(name, 'delete', () => this.api.delete(name));
  }

  /** Creates or replaces a server; null on success (the list is reloaded), else the errors to show in the form. */
  async save(draft: McpServerDraft): Promise<ServerErrors | null> {
    try {
      const request = buildRequest(draft);
      if (draft.mode === 'create') await this.api.create(request as Parameters<McpApi['create']>[0]);
      else await this.api.update(draft.name, request);
    } catch (error) {
      return mapServerError(error, draft);
    }
    await this.load();
    return null;
  }

  tools(name: string): Promise<McpServerToolsResponse> {
    return this.api.tools(name);
  }

  resources(name: string): Promise<McpServerResourcesResponse> {
    return this.api.resources(name);
  }

  private async run(name: string, action: McpAction, call: () => Promise<unknown>): Promise<void> {
    if (this.running()) return;
    this.running.set({ name, action });
    this.errors.update((errors) => {
      const next = { ...errors };
      delete next[name];
      return next;
    });
    try {
      await call();
    } catch (error) {
      this.errors.update((errors) => ({ ...errors, [name]: errorMessage(error) }));
    } finally {
      this.running.set(null);
      await this.load();
    }
  }

  private patch(name: string, change: Partial<McpServerRecord>): void {
    this.list.update((servers) => servers.map((server) => (server.name === name ? { ...server, ...change } : server)));
  }
}
