/**
 * The LLM settings file: `<config dir>/settings/llm.json`, directory 0700, file 0600
 * (private-fs.ts), written atomically. The only
 * code in this module that touches the disk.
 *
 * A stored key is written with the origin it is bound to (`openai_compatible.api_key_origin`, a CashCode addition
 * older readers ignore). A file without it (written by an older version or by the original server) binds its key to
 * the origin of the base URL stored with it.
 */
import { isErrorCode, isRecord } from '@cashcode/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { mkdirPrivate, PRIVATE_DIR_MODE } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { urlSecretBinding } from '../common/secret-binding';
import { parseAnthropic, serialiseAnthropic } from './anthropic-settings';
import {
  ANTHROPIC_RULES,
  apiKeyError,
  apiKeyOriginFor,
  normaliseBaseUrl,
  parseBackgroundSelection,
  type StoredLlmSettings,
} from './llm-settings.validation';

export const LLM_SETTINGS_FILE_VERSION = 2;

/** Why a settings file could not be used. The message never contains file content. */
export class LlmSettingsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmSettingsFileError';
  }
}

export type LlmSettingsLoadResult =
  | { status: 'missing' }
  | { status: 'loaded'; settings: StoredLlmSettings }
  | { status: 'invalid'; reason: string };

/** Serialises settings in the version 2 format (2-space indent, trailing newline). */
export function serialiseSettingsFile(settings: StoredLlmSettings): string {
  const body = {
    version: LLM_SETTINGS_FILE_VERSION,
    openai_compatible: {
      base_url: settings.openaiCompatible.baseUrl,
      api_key: settings.openaiCompatible.apiKey,
      ...(settings.openaiCompatible.apiKey !== '' ? { api_key_origin: settings.openaiCompatible.apiKeyOrigin } : {}),
    },
    ollama: { base_url: settings.ollama.baseUrl },
    ...(serialiseAnthropic(settings.anthropic) ? { anthropic: serialiseAnthropic(settings.anthropic) } : {}),
    ...(settings.thinkingModels && settings.thinkingModels.length > 0
      ? { thinking_models: settings.thinkingModels.map(({ provider, model }) => ({ provider, model })) }
      : {}),
    ...(settings.background ? { background: { provider: settings.background.provider, model: settings.background.model } } : {}),
    ...(settings.imageModels && settings.imageModels.length > 0
      ? { image_models: settings.imageModels.map(({ provider, model }) => ({ provider, model })) }
      : {}),
    ...(settings.lastUsed ? { last_used: { provider: settings.lastUsed.provider, model: settings.lastUsed.model } } : {}),
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}

/**
 * Parses a settings file. Versions 1 and 2 are accepted (extra fields such as version 1's `active_provider` and
 * `model` are ignored); anything else throws LlmSettingsFileError.
 */
export function parseSettingsFile(text: string): StoredLlmSettings {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new LlmSettingsFileError('unable to read the LLM settings file');
  }
  if (!isRecord(data)) throw new LlmSettingsFileError('invalid LLM settings file');
  const version = data['version'];
  if (version !== 1 && version !== 2) throw new LlmSettingsFileError('unsupported LLM settings version');
  const openai = data['openai_compatible'] ?? {};
  const ollama = data['ollama'] ?? {};
  if (!isRecord(openai) || !isRecord(ollama)) throw new LlmSettingsFileError('invalid LLM settings file');
  const openaiUrl = normaliseBaseUrl('openai_compatible.base_url', openai['base_url'] ?? '', 'openai_compatible');
  const ollamaUrl = normaliseBaseUrl('ollama.base_url', ollama['base_url'] ?? '', 'ollama');
  const rawKey = openai['api_key'] ?? '';
  if ('error' in openaiUrl || 'error' in ollamaUrl || typeof rawKey !== 'string') {
    throw new LlmSettingsFileError('invalid LLM settings file');
  }
  const apiKey = rawKey.trim();
  if (apiKeyError(apiKey) !== null) throw new LlmSettingsFileError('invalid LLM settings file');
  const apiKeyOrigin = parseKeyOrigin(openai['api_key_origin'], openaiUrl.value);
  const settings: StoredLlmSettings = {
    openaiCompatible: { baseUrl: openaiUrl.value, apiKey, apiKeyOrigin: apiKey === '' ? '' : apiKeyOrigin },
    ollama: { baseUrl: ollamaUrl.value },
  };
  // optional Anthropic connection (CashCode addition): a key is never kept from an invalid entry
  const anthropic = parseAnthropic(data['anthropic'], ANTHROPIC_RULES);
  if (anthropic === null) throw new LlmSettingsFileError('invalid LLM settings file');
  if (anthropic.baseUrl !== '' || anthropic.apiKey !== '') settings.anthropic = anthropic;
  // optional models with extended thinking on (CashCode addition); invalid entries are ignored
  if (Array.isArray(data['thinking_models'])) {
    const thinkingModels = (data['thinking_models'] as unknown[])
      .map((entry) => parseBackgroundSelection(entry))
      .flatMap((parsed) => ('value' in parsed ? [parsed.value] : []));
    if (thinkingModels.length > 0) settings.thinkingModels = thinkingModels;
  }
  // optional background model (CashCode addition); an invalid entry is ignored rather than failing the whole file
  if (data['background'] !== undefined && data['background'] !== null) {
    const background = parseBackgroundSelection(data['background']);
    if ('value' in background) settings.background = background.value;
  }
  // optional models marked as taking images (CashCode addition); invalid entries are ignored
  if (Array.isArray(data['image_models'])) {
    const imageModels = (data['image_models'] as unknown[])
      .map((entry) => parseBackgroundSelection(entry))
      .flatMap((parsed) => ('value' in parsed ? [parsed.value] : []));
    if (imageModels.length > 0) settings.imageModels = imageModels;
  }
  // optional last model used by a turn (CashCode addition); an invalid entry is ignored
  if (data['last_used'] !== undefined && data['last_used'] !== null) {
    const lastUsed = parseBackgroundSelection(data['last_used']);
    if ('value' in lastUsed) settings.lastUsed = lastUsed.value;
  }
  return settings;
}

/**
 * The origin a stored key is bound to: the recorded `api_key_origin` (normalised; '' = bound to nothing), or, for a
 * file without one, the origin of the base URL stored with the key.
 */
function parseKeyOrigin(raw: unknown, baseUrl: string): string {
  if (raw === undefined || raw === null) return apiKeyOriginFor(baseUrl);
  if (typeof raw !== 'string') throw new LlmSettingsFileError('invalid LLM settings file');
  if (raw.trim() === '') return '';
  const origin = urlSecretBinding(raw);
  if (origin === null) throw new LlmSettingsFileError('invalid LLM settings file');
  return origin;
}

@Injectable()
export class LlmSettingsStore {
  readonly directory: string;
  readonly filePath: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.directory = join(config.configDir, 'settings');
    this.filePath = join(this.directory, 'llm.json');
  }

  async load(): Promise<LlmSettingsLoadResult> {
    let text: string;
    try {
      text = await fs.readFile(this.filePath, 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return { status: 'missing' };
      return { status: 'invalid', reason: 'unable to read the LLM settings file' };
    }
    try {
      return { status: 'loaded', settings: parseSettingsFile(text) };
    } catch (error) {
      return { status: 'invalid', reason: error instanceof LlmSettingsFileError ? error.message : 'invalid LLM settings file' };
    }
  }

  /** Atomically replaces the file (0600) inside a 0700 directory; on failure the previous file is intact. */
  async save(settings: StoredLlmSettings): Promise<void> {
    await mkdirPrivate(this.directory);
    await fs.chmod(this.directory, PRIVATE_DIR_MODE).catch(() => undefined);
    await this.writeFile(serialiseSettingsFile(settings));
  }

  /** The write step (separate so tests can inject an I/O failure). */
  protected async writeFile(content: string): Promise<void> {
    await writeFileAtomic(this.filePath, content);
  }
}
