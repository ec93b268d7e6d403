/**
 * Settings of the OpenAI-compatible endpoint: `<config dir>/settings/openai-compat.json` (0600, written atomically
 * next to the LLM settings): whether `/v1` is on (off by default), the model `cashcode` runs, the tool-progress option
 * and the access keys. A key is 32 random bytes (`cck_` + base64url), shown once when created and stored only as its
 * SHA-256 hash with a name, a recognisable prefix and its created / last-used times. A change is applied only once
 * the file is written; a failed write changes nothing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { HttpStatus, Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  isRecord,
  LLM_PROVIDERS,
  type CreatedOpenAiCompatKey,
  type LlmSelection,
  type OpenAiCompatKey,
  type OpenAiCompatSettings,
  type UpdateOpenAiCompatSettingsRequest,
} from '@cashcode/contracts';
import { writeFileAtomic } from '../common/atomic-file';
import { DomainError } from '../common/domain-error';
import { localIsoWithOffset } from '../common/local-iso-time';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { SerialQueue } from '../common/keyed-queue';

export const OPENAI_COMPAT_FILE_VERSION = 1;
/** keys a server keeps at most */
export const MAX_KEYS = 50;
export const KEY_NAME_MAX_CHARS = 64;
const KEY_PREFIX = 'cck_';
const SHOWN_PREFIX_CHARS = 10;
/** a key's last-used time is written at most this often (it is kept exact in memory) */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

interface StoredKey extends OpenAiCompatKey {
  /** hex SHA-256 of the secret */
  hash: string;
}

interface StoredSettings {
  enabled: boolean;
  default_model: LlmSelection | null;
  tool_progress: boolean;
  map_user_to_chat: boolean;
  keys: StoredKey[];
}

export type OpenAiCompatSettingsErrorCode = 'key_not_found' | 'too_many_keys' | 'settings_save_failed';

export class OpenAiCompatSettingsError extends DomainError<OpenAiCompatSettingsErrorCode> {
  constructor(code: OpenAiCompatSettingsErrorCode, message: string) {
    const status =
      code === 'key_not_found'
        ? HttpStatus.NOT_FOUND
        : code === 'too_many_keys'
          ? HttpStatus.CONFLICT
          : HttpStatus.SERVICE_UNAVAILABLE;
    super(code, message, { status });
  }
}

function defaults(): StoredSettings {
  return { enabled: false, default_model: null, tool_progress: false, map_user_to_chat: false, keys: [] };
}

function isSelection(value: unknown): value is LlmSelection {
  return (
    isRecord(value) &&
    typeof value['provider'] === 'string' &&
    (LLM_PROVIDERS as readonly string[]).includes(value['provider']) &&
    typeof value['model'] === 'string' &&
    value['model'].trim() !== ''
  );
}

function parseKey(value: unknown): StoredKey | null {
  if (!isRecord(value)) return null;
  const { id, name, prefix, hash, created_at: created, last_used_at: lastUsed } = value;
  if (typeof id !== 'string' || typeof name !== 'string' || typeof prefix !== 'string' || typeof created !== 'string') return null;
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return null;
  return { id, name, prefix, hash, created_at: created, last_used_at: typeof lastUsed === 'string' ? lastUsed : null };
}

/** Parses the settings file; throws on anything it cannot use. */
export function parseOpenAiCompatFile(text: string): StoredSettings {
  const data: unknown = JSON.parse(text);
  if (!isRecord(data) || data['version'] !== OPENAI_COMPAT_FILE_VERSION) throw new Error('unsupported settings file');
  const keys = Array.isArray(data['keys']) ? data['keys'].map(parseKey) : [];
  if (keys.some((key) => key === null)) throw new Error('invalid key entry');
  return {
    enabled: data['enabled'] === true,
    default_model: isSelection(data['default_model']) ? { provider: data['default_model'].provider, model: data['default_model'].model } : null,
    tool_progress: data['tool_progress'] === true,
    map_user_to_chat: data['map_user_to_chat'] === true,
    keys: keys as StoredKey[],
  };
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

@Injectable()
export class OpenAiCompatSettingsService implements OnModuleInit {
  private readonly logger = new Logger(OpenAiCompatSettingsService.name);
  private settings: StoredSettings = defaults();
  /** key hashes as bytes, for the constant-time check */
  private digests: Array<{ key: StoredKey; digest: Buffer }> = [];
  /** one writer at a time */
  private readonly writes = new SerialQueue();
  private lastUsedWritten = new Map<string, number>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get file(): string {
    return join(this.config.configDir, 'settings', 'openai-compat.json');
  }

  async onModuleInit(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.logger.warn(formatEvent('openai.settings.unreadable', { error_code: (err as NodeJS.ErrnoException).code ?? 'unknown' }));
      }
      return;
    }
    try {
      this.install(parseOpenAiCompatFile(text));
    } catch {
      // the endpoint stays off (safe default) until the settings are saved again
      this.logger.warn(formatEvent('openai.settings.invalid', {}));
    }
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  get defaultModel(): LlmSelection | null {
    return this.settings.default_model ? { ...this.settings.default_model } : null;
  }

  get toolProgress(): boolean {
    return this.settings.tool_progress;
  }

  get mapUserToChat(): boolean {
    return this.settings.map_user_to_chat;
  }

  publicSettings(): OpenAiCompatSettings {
    return {
      enabled: this.settings.enabled,
      default_model: this.defaultModel,
      tool_progress: this.settings.tool_progress,
      map_user_to_chat: this.settings.map_user_to_chat,
      keys: this.settings.keys.map(({ hash: _hash, ...key }) => ({ ...key })),
      api_token_accepted: this.config.apiToken !== null,
    };
  }

  async update(body: UpdateOpenAiCompatSettingsRequest): Promise<OpenAiCompatSettings> {
    await this.change((draft) => {
      if (body.enabled !== undefined) draft.enabled = body.enabled;
      if (body.default_model !== undefined) {
        draft.default_model = body.default_model === null ? null : { provider: body.default_model.provider, model: body.default_model.model.trim() };
      }
      if (body.tool_progress !== undefined) draft.tool_progress = body.tool_progress;
      if (body.map_user_to_chat !== undefined) draft.map_user_to_chat = body.map_user_to_chat;
    });
    this.logger.log(formatEvent('openai.settings.saved', { enabled: this.settings.enabled, keys: this.settings.keys.length }));
    return this.publicSettings();
  }

  async createKey(name: string): Promise<CreatedOpenAiCompatKey> {
    if (this.settings.keys.length >= MAX_KEYS) {
      throw new OpenAiCompatSettingsError('too_many_keys', `At most ${MAX_KEYS} keys can exist; revoke one first.`);
    }
    const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
    const stored: StoredKey = {
      id: randomBytes(8).toString('hex'),
      name: name.trim(),
      prefix: secret.slice(0, SHOWN_PREFIX_CHARS),
      hash: digest(secret).toString('hex'),
      created_at: localIsoWithOffset(new Date()),
      last_used_at: null,
    };
    await this.change((draft) => {
      draft.keys.push(stored);
    });
    this.logger.log(formatEvent('openai.key.created', { key_id: stored.id }));
    const { hash: _hash, ...key } = stored;
    return { key, secret };
  }

  async revokeKey(id: string): Promise<void> {
    if (!this.settings.keys.some((key) => key.id === id)) {
      throw new OpenAiCompatSettingsError('key_not_found', `No key with id ${JSON.stringify(id)} exists.`);
    }
    await this.change((draft) => {
      draft.keys = draft.keys.filter((key) => key.id !== id);
    });
    this.logger.log(formatEvent('openai.key.revoked', { key_id: id }));
  }

  /**
   * The key a presented secret is, or null. Every stored hash is compared in constant time (no early exit), so the
   * time taken tells nothing about which key or how much of it matched. Marks the key used.
   */
  verify(presented: string): OpenAiCompatKey | null {
    const presentedDigest = digest(presented);
    let found: StoredKey | null = null;
    for (const entry of this.digests) {
      if (timingSafeEqual(presentedDigest, entry.digest) && found === null) found = entry.key;
    }
    if (found === null) return null;
    this.markUsed(found);
    const { hash: _hash, ...key } = found;
    return key;
  }

  private markUsed(key: StoredKey): void {
    const now = Date.now();
    key.last_used_at = localIsoWithOffset(new Date(now));
    const written = this.lastUsedWritten.get(key.id) ?? 0;
    if (now - written < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWritten.set(key.id, now);
    void this.enqueueWrite(() => this.save(this.settings)).catch((err: unknown) => {
      this.logger.warn(formatEvent('openai.key.last_used_save_failed', { error_code: (err as NodeJS.ErrnoException).code ?? 'unknown' }));
    });
  }

  /** Applies a change to a copy, writes it, then installs it; a failed write leaves everything as it was. */
  private change(mutate: (draft: StoredSettings) => void): Promise<void> {
    return this.enqueueWrite(async () => {
      const draft = structuredClone(this.settings);
      mutate(draft);
      try {
        await this.save(draft);
      } catch (err) {
        this.logger.warn(formatEvent('openai.settings.save_failed', { error_code: (err as NodeJS.ErrnoException).code ?? 'unknown' }));
        throw new OpenAiCompatSettingsError('settings_save_failed', 'Unable to save the OpenAI-compatible API settings; nothing changed.');
      }
      this.install(draft);
    });
  }

  private enqueueWrite(task: () => Promise<void>): Promise<void> {
    return this.writes.run(task);
  }

  private async save(settings: StoredSettings): Promise<void> {
    await mkdirPrivate(join(this.config.configDir, 'settings'));
    const body = { version: OPENAI_COMPAT_FILE_VERSION, ...settings };
    await writeFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`);
  }

  private install(settings: StoredSettings): void {
    this.settings = settings;
    this.digests = settings.keys.map((key) => ({ key, digest: Buffer.from(key.hash, 'hex') }));
  }
}
