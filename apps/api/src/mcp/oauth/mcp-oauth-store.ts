/**
 * MCP OAuth credentials on disk: one JSON per server under <dataDir>/mcp/oauth (0600 files in a 0700 dir, written
 * through private-fs), holding the dynamically registered client, the tokens and the redirect URI the client was
 * registered with. A record is bound to the origin of the server's URL (secret-binding): read for a server whose URL
 * has moved to another origin, it is deleted instead of used. Nothing here is logged or returned by REST.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { mkdirPrivate, writeFilePrivate } from '../../common/private-fs';
import { secretMayFollow, urlSecretBinding, type SecretBinding } from '../../common/secret-binding';

export interface StoredOAuthRecord {
  binding: SecretBinding | null;
  redirect_uri?: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
}

/** Server names are validated identifiers (`[a-z0-9_-]`), so they are safe file names; anything else is refused. */
function fileName(server: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(server)) throw new Error('invalid server name');
  return `${server}.json`;
}

export class McpOAuthStore {
  constructor(private readonly dir: string) {}

  file(server: string): string {
    return join(this.dir, fileName(server));
  }

  /** The record for `server` at `url`, or an empty one (a record bound to another origin is deleted). */
  async read(server: string, url: string): Promise<StoredOAuthRecord> {
    const binding = urlSecretBinding(url);
    let record: StoredOAuthRecord | null;
    try {
      record = JSON.parse(await fs.readFile(this.file(server), 'utf8')) as StoredOAuthRecord;
    } catch {
      return { binding };
    }
    if (!record || typeof record !== 'object' || !secretMayFollow(record.binding ?? null, binding)) {
      await this.remove(server);
      return { binding };
    }
    return record;
  }

  async update(server: string, url: string, change: (record: StoredOAuthRecord) => void): Promise<void> {
    const record = await this.read(server, url);
    change(record);
    record.binding = urlSecretBinding(url);
    await mkdirPrivate(this.dir);
    const tmp = `${this.file(server)}.tmp`;
    await writeFilePrivate(tmp, JSON.stringify(record, null, 2));
    await fs.rename(tmp, this.file(server));
  }

  async remove(server: string): Promise<boolean> {
    try {
      await fs.unlink(this.file(server));
      return true;
    } catch {
      return false;
    }
  }
}
