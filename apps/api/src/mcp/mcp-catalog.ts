/**
 * The MCP catalog (openspec mcp): the read-only built-in catalog `mcp_servers/mcp_config.json` (or the files of
 * CASHCODE_MCP_CATALOG, in order; stdio, sse and streamable_http entries) merged with the user catalog
 * `<data>/mcp/servers.json` (stdio, sse and streamable_http, written atomically with mode 0600, keys sorted, secrets
 * in clear). The only code that touches the catalog files.
 * A malformed catalog is a startup error naming the file.
 */
import { Inject, Injectable } from '@nestjs/common';
import { isRecord, isErrorCode, MCP_SERVER_NAME_PATTERN, type McpTransportType } from '@cashcode/contracts';
import { promises as fs } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { McpError } from './mcp.errors';
import type { McpServerConfig } from './mcp.types';
import { truncateCodePoints, validateHeaders, validateUrl, validateUserEntry, type ValidUserEntry } from './mcp-validation';
import { SerialQueue } from '../common/keyed-queue';

/** A catalog file that cannot be used: the server refuses to start. */
export class McpCatalogError extends Error {
  constructor(file: string, reason: string) {
    super(`Invalid MCP catalog ${file}: ${reason}`);
    this.name = 'McpCatalogError';
  }
}

async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return null;
    throw new McpCatalogError(file, `cannot be read (${String((error as NodeJS.ErrnoException | null)?.code ?? 'error')})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new McpCatalogError(file, `not valid JSON (${(error as Error | null)?.message ?? 'parse error'})`);
  }
  if (!isRecord(value)) throw new McpCatalogError(file, 'the top level must be an object keyed by server name');
  return value;
}

function stringList(value: unknown): string[] | null {
  if (value === undefined) return [];
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : null;
}

function stringMap(value: unknown): Record<string, string> | null {
  if (value === undefined) return {};
  if (!isRecord(value)) return null;
  return Object.values(value).every((v) => typeof v === 'string') ? (value as Record<string, string>) : null;
}

function inferType(entry: Record<string, unknown>): string {
  if (typeof entry['type'] === 'string') return entry['type'];
  if (typeof entry['command'] === 'string') return 'stdio';
  if (typeof entry['url'] === 'string' && /\/sse\/?$/.test(entry['url'].trim())) return 'sse';
  return 'streamable_http';
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.access(path);
    return true;
  } catch {
    return false;
  }
}

function userConfig(name: string, entry: ValidUserEntry, rootDir: string): McpServerConfig {
  return {
    name,
    displayName: entry.displayName,
    description: entry.description,
    type: entry.type,
    builtin: false,
    command: entry.command,
    args: [...entry.args],
    env: { ...entry.env },
    cwd: entry.cwd === '' ? rootDir : entry.cwd,
    userCwd: entry.cwd,
    url: entry.url,
    headers: entry.headers,
  };
}

@Injectable()
export class McpCatalog {
  private builtins = new Map<string, McpServerConfig>();
  private users = new Map<string, McpServerConfig>();
  /** one writer at a time */
  private readonly writeLane = new SerialQueue();
  private loaded = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Reads both catalogs; throws McpCatalogError (naming the file) when one is malformed. */
  async load(): Promise<void> {
    const builtins = new Map<string, McpServerConfig>();
    for (const file of this.config.mcpCatalogPaths ?? [this.config.mcpCatalogPath]) {
      for (const [name, config] of await this.loadBuiltins(file)) builtins.set(name, config);
    }
    this.builtins = builtins;
    this.users = await this.loadUsers(this.config.mcpUserCatalogPath);
    this.loaded = true;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Every server, built-in and user, sorted by name. */
  list(): McpServerConfig[] {
    return [...this.builtins.values(), ...this.users.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): McpServerConfig | undefined {
    return this.builtins.get(name) ?? this.users.get(name);
  }

  has(name: string): boolean {
    return this.builtins.has(name) || this.users.has(name);
  }

  /** Adds a user entry (the caller checked for conflicts); resolves once servers.json is on disk. */
  async addUser(name: string, entry: ValidUserEntry): Promise<McpServerConfig> {
    return this.writeUsers((users) => {
      if (this.has(name)) throw new McpError('conflict', `MCP server already exists: ${name}`);
      const config = userConfig(name, entry, this.config.rootDir);
      users.set(name, config);
      return config;
    });
  }

  /** Replaces a user entry. */
  async replaceUser(name: string, entry: ValidUserEntry): Promise<McpServerConfig> {
    return this.writeUsers((users) => {
      if (!users.has(name)) throw new McpError('not_found', `MCP server not found: ${name}`);
      const config = userConfig(name, entry, this.config.rootDir);
      users.set(name, config);
      return config;
    });
  }

  async removeUser(name: string): Promise<void> {
    await this.writeUsers((users) => {
      if (!users.delete(name)) throw new McpError('not_found', `MCP server not found: ${name}`);
    });
  }

  // ------------------------------------------------------------------------------------------ internals

  /** Applies `change` to a copy of the user entries, writes the file, then publishes the copy (one writer at a time). */
  private writeUsers<T>(change: (users: Map<string, McpServerConfig>) => T): Promise<T> {
    const run = this.writeLane.run(async () => {
      const next = new Map(this.users);
      const result = change(next);
      await this.persist(next);
      this.users = next;
      return result;
    });
    return run.catch((error: unknown) => {
      if (error instanceof McpError) throw error;
      throw new McpError('storage', 'unable to save the MCP catalog');
    });
  }

  private async persist(users: Map<string, McpServerConfig>): Promise<void> {
    const file: Record<string, Record<string, unknown>> = {};
    for (const name of [...users.keys()].sort()) {
      const config = users.get(name)!;
      const entry: Record<string, unknown> = {
        type: config.type,
        display_name: config.displayName,
        description: config.description,
      };
      if (config.type === 'stdio') {
        entry['command'] = config.command;
        entry['args'] = config.args;
        if (Object.keys(config.env).length > 0) entry['env'] = config.env;
        if (config.userCwd) entry['cwd'] = config.userCwd;
      } else {
        entry['url'] = config.url;
        if (Object.keys(config.headers).length > 0) entry['headers'] = config.headers;
      }
      file[name] = entry;
    }
    await mkdirPrivate(dirname(this.config.mcpUserCatalogPath));
    await writeFileAtomic(this.config.mcpUserCatalogPath, `${JSON.stringify(file, null, 2)}\n`);
  }

  private async loadBuiltins(file: string): Promise<Map<string, McpServerConfig>> {
    const raw = await readJsonObject(file);
    const out = new Map<string, McpServerConfig>();
    for (const [name, value] of Object.entries(raw ?? {})) {
      const where = (reason: string) => new McpCatalogError(file, `server '${name}': ${reason}`);
      if (!MCP_SERVER_NAME_PATTERN.test(name)) throw where('invalid server name');
      if (!isRecord(value)) throw where('the entry must be an object');
      const type = inferType(value) === 'http' ? 'streamable_http' : inferType(value);
      if (type !== 'stdio' && type !== 'sse' && type !== 'streamable_http') throw where(`unsupported type '${type}'`);
      const args = stringList(value['args']);
      const env = stringMap(value['env']);
      if (args === null) throw where('args must be a list of strings');
      if (env === null) throw where('env must be an object of strings');
      const display = typeof value['display_name'] === 'string' && value['display_name'].trim() !== '' ? value['display_name'].trim() : name;
      const description = typeof value['description'] === 'string' ? value['description'].trim() : '';
      const config: McpServerConfig = {
        name,
        displayName: truncateCodePoints(display, 100),
        description: truncateCodePoints(description, 1000),
        type: type as McpTransportType,
        builtin: true,
        command: '',
        args: [],
        env: {},
        cwd: this.config.rootDir,
        url: '',
        headers: {},
      };
      try {
        if (type === 'stdio') {
          const command = value['command'];
          if (typeof command !== 'string' || command.trim() === '') throw where('stdio servers need a command');
          config.command = command.trim();
          config.args = await Promise.all(args.map((arg) => this.resolveArg(arg)));
          config.env = { ...env };
        } else {
          config.url = validateUrl(value['url']);
          config.headers = validateHeaders(value['headers'], null);
        }
      } catch (error) {
        if (error instanceof McpError) throw where(error.message);
        throw error;
      }
      out.set(name, config);
    }
    return out;
  }

  /** A relative argument naming an existing path under the repo root becomes absolute (openspec mcp). */
  private async resolveArg(arg: string): Promise<string> {
    if (arg === '' || arg.startsWith('-') || isAbsolute(arg)) return arg;
    const candidate = resolve(this.config.rootDir, arg);
    return (await exists(candidate)) ? candidate : arg;
  }

  private async loadUsers(file: string): Promise<Map<string, McpServerConfig>> {
    const raw = await readJsonObject(file);
    const out = new Map<string, McpServerConfig>();
    for (const [name, value] of Object.entries(raw ?? {})) {
      if (!MCP_SERVER_NAME_PATTERN.test(name)) throw new McpCatalogError(file, `invalid server name '${name}'`);
      if (this.builtins.has(name)) throw new McpCatalogError(file, `server '${name}' has the name of a built-in server`);
      if (!isRecord(value)) throw new McpCatalogError(file, `server '${name}': the entry must be an object`);
      try {
        out.set(name, userConfig(name, validateUserEntry(value, null), this.config.rootDir));
      } catch (error) {
        if (error instanceof McpError) throw new McpCatalogError(file, `server '${name}': ${error.message}`);
        throw error;
      }
    }
    return out;
  }
}
