/**
 * The Anthropic connection of the LLM settings (openspec llm-settings "Requirement: Anthropic provider"): pure rules,
 * no I/O. Its key follows the rules of the OpenAI-compatible key (bound to the origin it was entered for, never sent
 * elsewhere); unlike it, a key is required (Anthropic has no keyless servers), and a key entered without a base URL
 * is for the public API.
 */
import { isRecord } from '@cashcode/contracts';
import type { ProblemFieldError } from '../common/problem-details';
import { secretMayFollow, urlSecretBinding } from '../common/secret-binding';
import { LLM_SETTINGS_MESSAGES } from './llm-settings.errors';
import { ANTHROPIC_DEFAULT_BASE_URL } from './provider-client';

/** What is stored: `apiKeyOrigin` is the origin the key was entered for ('' when no key is stored). */
export interface StoredAnthropicSettings {
  baseUrl: string;
  apiKey: string;
  apiKeyOrigin: string;
}

export const EMPTY_ANTHROPIC_SETTINGS: StoredAnthropicSettings = Object.freeze({ baseUrl: '', apiKey: '', apiKeyOrigin: '' });

/** What the shared rules of llm-settings.validation.ts provide (passed in: that file imports this one). */
export interface AnthropicRuleDeps {
  normaliseBaseUrl(raw: unknown): { value: string } | { error: string };
  apiKeyError(key: string): string | null;
}

/** The key that may be sent to the stored base URL: the stored key when bound to its origin, else ''. */
export function usableAnthropicKey(settings: StoredAnthropicSettings): string {
  if (settings.apiKey === '' || settings.baseUrl === '') return '';
  const bound = settings.apiKeyOrigin === '' ? null : settings.apiKeyOrigin;
  return secretMayFollow(bound, urlSecretBinding(settings.baseUrl)) ? settings.apiKey : '';
}

/** Ready: a base URL and a key bound to its origin. */
export function isAnthropicReady(settings: StoredAnthropicSettings | undefined): boolean {
  return settings !== undefined && usableAnthropicKey(settings) !== '';
}

/**
 * Applies the `anthropic` object of a PUT (or `/test` draft). Omitted: the stored connection stays as it is. Field
 * errors are added to `errors`.
 */
export function applyAnthropicUpdate(
  current: StoredAnthropicSettings,
  raw: unknown,
  errors: ProblemFieldError[],
  rules: AnthropicRuleDeps,
): StoredAnthropicSettings {
  if (raw === undefined) return { ...current };
  if (!isRecord(raw)) {
    errors.push({ field: 'anthropic', message: 'anthropic must be an object' });
    return { ...current };
  }
  const url = rules.normaliseBaseUrl(raw['base_url'] === undefined ? '' : raw['base_url']);
  if ('error' in url) errors.push({ field: 'anthropic.base_url', message: url.error });
  let submittedKey = '';
  const rawKey = raw['api_key'];
  if (rawKey !== undefined && rawKey !== null) {
    if (typeof rawKey !== 'string') {
      errors.push({ field: 'anthropic.api_key', message: 'anthropic.api_key must be a string' });
    } else {
      submittedKey = rawKey.trim();
      const keyError = rules.apiKeyError(submittedKey);
      if (keyError !== null) errors.push({ field: 'anthropic.api_key', message: keyError });
    }
  }
  const rawClear = raw['clear_api_key'] === undefined ? false : raw['clear_api_key'];
  if (typeof rawClear !== 'boolean') {
    errors.push({ field: 'anthropic.clear_api_key', message: 'anthropic.clear_api_key must be a boolean' });
  }
  const clear = rawClear === true;
  if (clear && submittedKey !== '') errors.push({ field: 'anthropic.api_key', message: LLM_SETTINGS_MESSAGES.keyConflict });

  let apiKey = clear ? '' : submittedKey !== '' ? submittedKey : current.apiKey;
  let baseUrl = 'value' in url ? url.value : '';
  // a key without a base URL is for the public API
  if (baseUrl === '' && apiKey !== '') baseUrl = ANTHROPIC_DEFAULT_BASE_URL;
  let apiKeyOrigin = current.apiKeyOrigin;
  if (submittedKey !== '' && !clear) {
    apiKeyOrigin = urlSecretBinding(baseUrl) ?? '';
  } else if (!clear && apiKey !== '' && 'value' in url) {
    const bound = current.apiKeyOrigin === '' ? null : current.apiKeyOrigin;
    if (!secretMayFollow(bound, urlSecretBinding(baseUrl))) {
      errors.push({
        field: 'anthropic.api_key',
        message: bound === null ? LLM_SETTINGS_MESSAGES.keyUnbound : LLM_SETTINGS_MESSAGES.keyOriginMoved,
      });
    }
  }
  if (apiKey === '') {
    apiKey = '';
    apiKeyOrigin = '';
  }
  return { baseUrl, apiKey, apiKeyOrigin };
}

/** The `anthropic` object of the settings file (absent when nothing is configured). */
export function serialiseAnthropic(settings: StoredAnthropicSettings | undefined): Record<string, string> | undefined {
  if (!settings || (settings.baseUrl === '' && settings.apiKey === '')) return undefined;
  return {
    base_url: settings.baseUrl,
    api_key: settings.apiKey,
    ...(settings.apiKey !== '' ? { api_key_origin: settings.apiKeyOrigin } : {}),
  };
}

/** Reads the `anthropic` object of the settings file; null when it is invalid. */
export function parseAnthropic(raw: unknown, rules: AnthropicRuleDeps): StoredAnthropicSettings | null {
  if (raw === undefined || raw === null) return { ...EMPTY_ANTHROPIC_SETTINGS };
  if (!isRecord(raw)) return null;
  const url = rules.normaliseBaseUrl(raw['base_url'] ?? '');
  const key = raw['api_key'] ?? '';
  if ('error' in url || typeof key !== 'string' || rules.apiKeyError(key.trim()) !== null) return null;
  const apiKey = key.trim();
  const origin = raw['api_key_origin'];
  let apiKeyOrigin = '';
  if (apiKey !== '') {
    if (typeof origin === 'string' && origin.trim() !== '') {
      const bound = urlSecretBinding(origin);
      if (bound === null) return null;
      apiKeyOrigin = bound;
    } else if (origin === undefined || origin === null) {
      apiKeyOrigin = url.value === '' ? '' : (urlSecretBinding(url.value) ?? '');
    }
  }
  return { baseUrl: url.value, apiKey, apiKeyOrigin };
}
