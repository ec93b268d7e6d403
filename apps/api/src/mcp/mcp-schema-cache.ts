/**
 * The tool-schema cache (openspec mcp "Requirement: Schema cache"): `<data>/mcp_cache/<safe name>.json` =
 * `{"transport_fingerprint", "cached_at", "tools":[{"name","description","inputSchema"}], "resources":[], "prompts":[]}`
 * (a tool entry also keeps `title` and `annotations` when the server declared them; readers without them ignore them)
 * written after every successful connect, deleted on update/delete, read by tool_search and the tools endpoint
 * (an entry whose fingerprint does not match the server's current transport is ignored). Entries are kept in memory
 * once read, so a search never touches the disk twice for the same server.
 */
import { isRecord } from '@cashcode/contracts';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { McpServerConfig, McpToolDescriptor } from './mcp.types';
import { sanitizeAnnotations, toolTitle } from './mcp-annotations';

export interface CacheEntry {
  fingerprint: string;
  cachedAt: string;
  tools: McpToolDescriptor[];
}

/** `{"args","command","env","url"}` compact, keys sorted at every level, non-ASCII raw. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** First 16 hex of SHA-256 over the transport (headers are not part of it). */
export function transportFingerprint(config: McpServerConfig): string {
  const canonical = canonicalJson({ args: config.args, command: config.command, env: config.env, url: config.url });
  return createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 16);
}

export function safeCacheName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

function parseEntry(value: unknown): CacheEntry | null {
  if (!isRecord(value)) return null;
  const fingerprint = value['transport_fingerprint'];
  const tools = value['tools'];
  if (typeof fingerprint !== 'string' || !Array.isArray(tools)) return null;
  const out: McpToolDescriptor[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || typeof tool['name'] !== 'string' || tool['name'] === '') continue;
    const descriptor: McpToolDescriptor = {
      name: tool['name'],
      description: typeof tool['description'] === 'string' ? tool['description'] : '',
      inputSchema: isRecord(tool['inputSchema']) ? tool['inputSchema'] : {},
    };
    const annotations = sanitizeAnnotations(tool['annotations']);
    const title = toolTitle(tool['title'], annotations);
    if (annotations !== undefined) {
      descriptor.annotations = annotations;
      descriptor.readOnly = annotations.readOnlyHint === true;
    }
    if (title !== undefined) descriptor.title = title;
    out.push(descriptor);
  }
  return { fingerprint, cachedAt: typeof value['cached_at'] === 'string' ? value['cached_at'] : '', tools: out };
}

@Injectable()
export class McpSchemaCache {
  private readonly logger = new Logger(McpSchemaCache.name);
  /** server → entry (null: no usable file); absent: not read yet */
  private readonly entries = new Map<string, CacheEntry | null>();
  private readonly reading = new Map<string, Promise<CacheEntry | null>>();
  /** bumped on every change of a server's entry (search index invalidation) */
  private readonly versions = new Map<string, number>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  version(name: string): number {
    return this.versions.get(name) ?? 0;
  }

  /** The cached tools of a server if the cache matches its current transport. */
  async read(server: McpServerConfig): Promise<CacheEntry | null> {
    const entry = await this.load(server.name);
    return entry && entry.fingerprint === transportFingerprint(server) ? entry : null;
  }

  /** The in-memory entry if already read (matching fingerprint), without touching the disk. */
  peek(server: McpServerConfig): CacheEntry | null | undefined {
    if (!this.entries.has(server.name)) return undefined;
    const entry = this.entries.get(server.name) ?? null;
    return entry && entry.fingerprint === transportFingerprint(server) ? entry : null;
  }

  async write(server: McpServerConfig, tools: readonly McpToolDescriptor[]): Promise<void> {
    const entry: CacheEntry = {
      fingerprint: transportFingerprint(server),
      cachedAt: new Date().toISOString(),
      tools: tools.map((t) => {
        const cached: McpToolDescriptor = { name: t.name, description: t.description, inputSchema: t.inputSchema };
        if (t.title !== undefined) cached.title = t.title;
        if (t.annotations !== undefined) cached.annotations = t.annotations;
        return cached;
      }),
    };
    const body = {
      transport_fingerprint: entry.fingerprint,
      cached_at: entry.cachedAt,
      tools: entry.tools,
      resources: [],
      prompts: [],
    };
    try {
      await mkdirPrivate(this.config.mcpCacheDir);
      await writeFileAtomic(this.pathOf(server.name), `${JSON.stringify(body, null, 2)}\n`);
    } catch (error) {
      this.logger.warn(
        formatEvent('mcp.cache.write_failed', { server: server.name, error: (error as NodeJS.ErrnoException).code ?? 'error' }),
      );
    }
    this.set(server.name, entry);
  }

  async remove(name: string): Promise<void> {
    await fs.rm(this.pathOf(name), { force: true }).catch(() => undefined);
    this.set(name, null);
  }

  private set(name: string, entry: CacheEntry | null): void {
    this.reading.delete(name);
    this.entries.set(name, entry);
    this.versions.set(name, this.version(name) + 1);
  }

  private pathOf(name: string): string {
    return join(this.config.mcpCacheDir, `${safeCacheName(name)}.json`);
  }

  private load(name: string): Promise<CacheEntry | null> {
    if (this.entries.has(name)) return Promise.resolve(this.entries.get(name) ?? null);
    let pending = this.reading.get(name);
    if (!pending) {
      pending = (async () => {
        let entry: CacheEntry | null;
        try {
          entry = parseEntry(JSON.parse(await fs.readFile(this.pathOf(name), 'utf8')));
        } catch {
          entry = null;
        }
        if (this.reading.get(name) === pending) {
          this.reading.delete(name);
          this.entries.set(name, entry);
          this.versions.set(name, this.version(name) + 1);
        }
        return entry;
      })();
      this.reading.set(name, pending);
    }
    return pending;
  }
}
