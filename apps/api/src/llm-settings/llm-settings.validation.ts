/**
 * Pure rules of the LLM settings: URL normalisation, the update semantics of PUT (and of the `/test` draft), the
 * origin binding of the stored API key, readiness and the public projection. No I/O.
 */
import { isRecord, LLM_PROVIDERS, MAX_MODEL_CHARS, type LlmProvider, type LlmSelection, type PublicLlmSettings } from '@cashcode/contracts';
import type { ProblemFieldError } from '../common/problem-details';
import { secretMayFollow, urlSecretBinding } from '../common/secret-binding';
import { LLM_SETTINGS_MESSAGES, LlmSettingsError } from './llm-settings.errors';
import { trimTrailing } from '../common/trim';
import {
  applyAnthropicUpdate,
  EMPTY_ANTHROPIC_SETTINGS,
  isAnthropicReady,
  usableAnthropicKey,
  type AnthropicRuleDeps,
  type StoredAnthropicSettings,
} from './anthropic-settings';

export const BASE_URL_MAX_CHARS = 2048;
export const API_KEY_MAX_CHARS = 16384;

/** What is stored (and what the runtime uses). Model ids are never stored; there is no "active provider". */
export interface StoredLlmSettings {
  /**
   * `apiKeyOrigin` is the origin (see urlSecretBinding) the key was entered for; the key is only ever sent there.
   * '' when no key is stored, or when the key was stored without a base URL (then it is bound to nothing).
   */
  openaiCompatible: { baseUrl: string; apiKey: string; apiKeyOrigin: string };
  ollama: { baseUrl: string };
  /** Anthropic's Messages API (unset: not configured) */
  anthropic?: StoredAnthropicSettings;
  /** models the user turned extended thinking on for (unset = none) */
  thinkingModels?: LlmSelection[];
  /** the model background jobs (Dream) use; unset → the last model a turn used */
  background?: LlmSelection;
  /** models the user marked as taking image input (unset = none) */
  imageModels?: LlmSelection[];
  /** the model the last chat turn used (unset before the first turn) */
  lastUsed?: LlmSelection;
}

export const EMPTY_LLM_SETTINGS: StoredLlmSettings = Object.freeze({
  openaiCompatible: Object.freeze({ baseUrl: '', apiKey: '', apiKeyOrigin: '' }),
  ollama: Object.freeze({ baseUrl: '' }),
}) as StoredLlmSettings;

/** The body of PUT (and the connection fields of `/test`), as received; values are checked here. */
export interface LlmSettingsUpdate {
  openai_compatible: { base_url?: unknown; api_key?: unknown; clear_api_key?: unknown };
  ollama: { base_url?: unknown };
  /** missing → keep the stored Anthropic connection */
  anthropic?: unknown;
  /** missing → keep the stored background model; null → clear it; else `{ provider, model }` */
  background?: unknown;
}

export type BaseUrlField = 'openai_compatible.base_url' | 'ollama.base_url' | 'anthropic.base_url';

function codePointLength(text: string): number {
  let count = 0;
  for (const _char of text) count += 1;
  return count;
}

/**
 * Validates and normalises a base URL: trimmed, empty allowed, ≤2048 chars, http(s) with a host, no credentials,
 * no query or fragment, trailing `/` removed; for Ollama a trailing `/v1` is removed too. Returns the normalised URL
 * or the field error message.
 */
export function normaliseBaseUrl(
  field: BaseUrlField,
  raw: unknown,
  provider: LlmProvider,
): { value: string } | { error: string } {
  if (typeof raw !== 'string') return { error: `${field} must be a string` };
  const text = raw.trim();
  if (text === '') return { value: '' };
  if (codePointLength(text) > BASE_URL_MAX_CHARS) return { error: `${field} is too long` };
  const notHttp = { error: `${field} must be an http or https URL` };
  if (!/^https?:\/\//i.test(text)) return notHttp;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return notHttp;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return notHttp;
  if (url.username !== '' || url.password !== '' || /^https?:\/\/[^/?#]*@/i.test(text)) {
    return { error: `${field} must not contain credentials` };
  }
  if (text.includes('?') || text.includes('#')) return { error: `${field} must not contain query or fragment` };
  let path = trimTrailing(url.pathname, '/');
  // Ollama's server and the Anthropic SDK add `/v1` themselves
  if (provider === 'ollama' || provider === 'anthropic') path = trimTrailing(path.replace(/\/v1$/, ''), '/');
  return { value: `${url.protocol}//${url.host}${path}` };
}

/** Validates a stored or submitted API key value (already known to be a string). */
export function apiKeyError(key: string, field = 'openai_compatible.api_key'): string | null {
  if (codePointLength(key) > API_KEY_MAX_CHARS) return `${field} is too long`;
  // A header value must be printable ASCII; anything else would fail inside fetch with a confusing error.
  if (/[^\x20-\x7e]/.test(key)) return `${field} must contain only printable ASCII characters`;
  return null;
}

/** The shared URL and key rules, worded for the `anthropic` fields. */
export const ANTHROPIC_RULES: AnthropicRuleDeps = {
  normaliseBaseUrl: (raw) => normaliseBaseUrl('anthropic.base_url', raw, 'anthropic'),
  apiKeyError: (key) => apiKeyError(key, 'anthropic.api_key'),
};

/** The origin a key entered together with `baseUrl` is bound to ('' for no base URL: bound to nothing). */
export function apiKeyOriginFor(baseUrl: string): string {
  return baseUrl === '' ? '' : (urlSecretBinding(baseUrl) ?? '');
}

/**
 * The key that may be sent to the stored base URL: the stored key when it is bound to that URL's origin, else ''.
 * Every provider client is built with this key, so a key never leaves for an origin it was not entered for, whatever
 * produced the settings (a PUT, a `/test` draft, the settings file).
 */
export function usableApiKey(openai: StoredLlmSettings['openaiCompatible']): string {
  if (openai.apiKey === '' || openai.baseUrl === '') return '';
  const bound = openai.apiKeyOrigin === '' ? null : openai.apiKeyOrigin;
  return secretMayFollow(bound, urlSecretBinding(openai.baseUrl)) ? openai.apiKey : '';
}

/**
 * A provider is ready once it has a base URL; the OpenAI-compatible API key is optional (keyless local servers: LM
 * Studio, llama.cpp's server), and without a usable key requests carry no Authorization header.
 */
export function isProviderReady(settings: StoredLlmSettings, provider: LlmProvider): boolean {
  switch (provider) {
    case 'openai_compatible':
      return settings.openaiCompatible.baseUrl !== '';
    case 'ollama':
      return settings.ollama.baseUrl !== '';
    case 'anthropic':
      return isAnthropicReady(settings.anthropic);
  }
}

export function readyProviders(settings: StoredLlmSettings): LlmProvider[] {
  return LLM_PROVIDERS.filter((provider) => isProviderReady(settings, provider));
}

export function toPublicSettings(settings: StoredLlmSettings): PublicLlmSettings {
  const openaiReady = isProviderReady(settings, 'openai_compatible');
  const ollamaReady = isProviderReady(settings, 'ollama');
  const anthropic = settings.anthropic ?? EMPTY_ANTHROPIC_SETTINGS;
  const anthropicReady = isProviderReady(settings, 'anthropic');
  return {
    configured: openaiReady || ollamaReady || anthropicReady,
    openai_compatible: {
      base_url: settings.openaiCompatible.baseUrl,
      ready: openaiReady,
      // a key bound to another origin than the stored base URL cannot be kept: it counts as not configured
      api_key_configured:
        settings.openaiCompatible.baseUrl === ''
          ? settings.openaiCompatible.apiKey !== ''
          : usableApiKey(settings.openaiCompatible) !== '',
    },
    ollama: { base_url: settings.ollama.baseUrl, ready: ollamaReady },
    anthropic: { base_url: anthropic.baseUrl, ready: anthropicReady, api_key_configured: usableAnthropicKey(anthropic) !== '' },
    ...(settings.thinkingModels && settings.thinkingModels.length > 0
      ? { thinking_models: settings.thinkingModels.map((entry) => ({ ...entry })) }
      : {}),
    background: settings.background ? { ...settings.background } : null,
    ...(settings.imageModels && settings.imageModels.length > 0
      ? { image_models: settings.imageModels.map((entry) => ({ ...entry })) }
      : {}),
  };
}

/**
 * Validates a background model selection (`{ provider, model }`, model trimmed, 1–256 characters). Returns the
 * selection or the field errors.
 */
export function parseBackgroundSelection(raw: unknown): { value: LlmSelection } | { errors: ProblemFieldError[] } {
  if (!isRecord(raw)) return { errors: [{ field: 'background', message: 'background must be an object or null' }] };
  const errors: ProblemFieldError[] = [];
  for (const key of Object.keys(raw)) {
    if (key !== 'provider' && key !== 'model') errors.push({ field: `background.${key}`, message: `background.${key} is not allowed` });
  }
  const provider = raw['provider'];
  if (typeof provider !== 'string' || !(LLM_PROVIDERS as readonly string[]).includes(provider)) {
    errors.push({ field: 'background.provider', message: `background.provider must be one of: ${LLM_PROVIDERS.join(', ')}` });
  }
  const model = typeof raw['model'] === 'string' ? raw['model'].trim() : '';
  if (model === '' || codePointLength(model) > MAX_MODEL_CHARS) {
    errors.push({ field: 'background.model', message: `background.model must be a non-empty string of at most ${MAX_MODEL_CHARS} characters` });
  }
  if (errors.length > 0) return { errors };
  return { value: { provider: provider as LlmProvider, model } };
}

/** Only an omitted field takes its default; an explicit null is a wrong type (except api_key, which allows null). */
function withDefault(value: unknown, fallback: string | boolean): unknown {
  return value === undefined ? fallback : value;
}

/**
 * Applies an update to the current settings (PUT, and the draft of `/test`). Field errors are collected and thrown
 * together as `invalid_settings` (422). Does not check that a provider is ready (see requireReadyProvider).
 *  - clear_api_key true → key emptied (a non-blank api_key alongside it is an error);
 *  - else a non-blank api_key replaces the key (stored trimmed) and is bound to the new base URL's origin;
 *  - else (missing / null / blank) the stored key is kept, but only while the base URL stays on the origin the key
 *    is bound to (or is emptied, which sends it nowhere); a base URL on another origin is refused on
 *    `openai_compatible.api_key` — the stored key never leaves for an origin it was not entered for.
 */
export function applySettingsUpdate(current: StoredLlmSettings, update: LlmSettingsUpdate): StoredLlmSettings {
  const errors: ProblemFieldError[] = [];
  const openai: Record<string, unknown> = isRecord(update.openai_compatible) ? update.openai_compatible : {};
  const ollama: Record<string, unknown> = isRecord(update.ollama) ? update.ollama : {};
  if (!isRecord(update.openai_compatible)) {
    errors.push({ field: 'openai_compatible', message: 'openai_compatible must be an object' });
  }
  if (!isRecord(update.ollama)) errors.push({ field: 'ollama', message: 'ollama must be an object' });

  const openaiUrl = normaliseBaseUrl('openai_compatible.base_url', withDefault(openai['base_url'], ''), 'openai_compatible');
  if ('error' in openaiUrl) errors.push({ field: 'openai_compatible.base_url', message: openaiUrl.error });
  const ollamaUrl = normaliseBaseUrl('ollama.base_url', withDefault(ollama['base_url'], ''), 'ollama');
  if ('error' in ollamaUrl) errors.push({ field: 'ollama.base_url', message: ollamaUrl.error });

  const rawKey = openai['api_key'];
  let submittedKey = '';
  if (rawKey !== undefined && rawKey !== null) {
    if (typeof rawKey !== 'string') {
      errors.push({ field: 'openai_compatible.api_key', message: 'openai_compatible.api_key must be a string' });
    } else {
      const lengthOrCharsError = apiKeyError(rawKey.trim());
      if (lengthOrCharsError !== null) {
        errors.push({ field: 'openai_compatible.api_key', message: lengthOrCharsError });
      }
      submittedKey = rawKey.trim();
    }
  }
  const rawClear = withDefault(openai['clear_api_key'], false);
  if (typeof rawClear !== 'boolean') {
    errors.push({ field: 'openai_compatible.clear_api_key', message: 'openai_compatible.clear_api_key must be a boolean' });
  }
  const clear = rawClear === true;
  if (clear && submittedKey !== '') {
    errors.push({ field: 'openai_compatible.api_key', message: LLM_SETTINGS_MESSAGES.keyConflict });
  }
  let background = current.background;
  if (update.background === null) {
    background = undefined;
  } else if (update.background !== undefined) {
    const parsed = parseBackgroundSelection(update.background);
    if ('errors' in parsed) errors.push(...parsed.errors);
    else background = parsed.value;
  }
  const baseUrl = 'value' in openaiUrl ? openaiUrl.value : '';
  const stored = current.openaiCompatible;
  let apiKey = stored.apiKey;
  let apiKeyOrigin = stored.apiKeyOrigin;
  if (clear) {
    apiKey = '';
    apiKeyOrigin = '';
  } else if (submittedKey !== '') {
    apiKey = submittedKey;
    apiKeyOrigin = apiKeyOriginFor(baseUrl);
  } else if (stored.apiKey !== '' && baseUrl !== '' && 'value' in openaiUrl) {
    const bound = stored.apiKeyOrigin === '' ? null : stored.apiKeyOrigin;
    if (!secretMayFollow(bound, urlSecretBinding(baseUrl))) {
      const message = bound === null ? LLM_SETTINGS_MESSAGES.keyUnbound : LLM_SETTINGS_MESSAGES.keyOriginMoved;
      errors.push({ field: 'openai_compatible.api_key', message });
    }
  }
  if (apiKey === '') apiKeyOrigin = '';
  const anthropic = applyAnthropicUpdate(current.anthropic ?? EMPTY_ANTHROPIC_SETTINGS, update.anthropic, errors, ANTHROPIC_RULES);
  if (errors.length > 0) throw invalidSettings(errors);

  const next: StoredLlmSettings = {
    openaiCompatible: { baseUrl, apiKey, apiKeyOrigin },
    ollama: { baseUrl: (ollamaUrl as { value: string }).value },
  };
  if (anthropic.baseUrl !== '' || anthropic.apiKey !== '') next.anthropic = anthropic;
  if (current.thinkingModels && current.thinkingModels.length > 0) next.thinkingModels = current.thinkingModels.map((entry) => ({ ...entry }));
  if (background) next.background = { ...background };
  // not part of the PUT body: the image-model marks are kept as they are
  if (current.imageModels && current.imageModels.length > 0) next.imageModels = current.imageModels.map((entry) => ({ ...entry }));
  if (current.lastUsed) next.lastUsed = { ...current.lastUsed };
  return next;
}

/** A chosen background model must use a provider that the settings make ready (422 `invalid_settings`). */
export function requireBackgroundProviderReady(settings: StoredLlmSettings): void {
  const background = settings.background;
  if (!background || isProviderReady(settings, background.provider)) return;
  const message = `background.provider ${background.provider} is not ready: configure its connection or choose another background model`;
  throw new LlmSettingsError('invalid_settings', message, [{ field: 'background.provider', message }]);
}

function invalidSettings(errors: ProblemFieldError[]): LlmSettingsError {
  const detail = errors.length === 1 ? errors[0].message : errors.map((error) => error.message).join('; ');
  return new LlmSettingsError('invalid_settings', detail, errors);
}

/** Saving requires at least one ready provider (422 `at least one provider connection is required`). */
export function requireReadyProvider(settings: StoredLlmSettings): void {
  if (readyProviders(settings).length === 0) {
    throw new LlmSettingsError('no_provider_ready', LLM_SETTINGS_MESSAGES.noProvider);
  }
}

/** `/test` asked for a provider that the submitted draft does not make ready. */
export function requireDraftProviderReady(settings: StoredLlmSettings, provider: LlmProvider): void {
  if (isProviderReady(settings, provider)) return;
  if (provider === 'anthropic') {
    throw new LlmSettingsError('provider_not_ready', 'anthropic is not ready: an API key is required to test the connection', [
      { field: 'anthropic.api_key', message: 'anthropic.api_key is required to test this connection' },
    ]);
  }
  if (provider === 'openai_compatible') {
    const missing = 'openai_compatible.base_url';
    throw new LlmSettingsError(
      'provider_not_ready',
      'openai_compatible is not ready: a base URL is required to test the connection',
      [{ field: missing, message: `${missing} is required to test this connection` }],
    );
  }
  throw new LlmSettingsError('provider_not_ready', 'ollama is not ready: a base URL is required to test the connection', [
    { field: 'ollama.base_url', message: 'ollama.base_url is required to test this connection' },
  ]);
}
