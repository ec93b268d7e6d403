/**
 * The legacy DEEPSEEK_* migration (openspec llm-settings "Requirement: Legacy DEEPSEEK_* migration"): the settings a
 * server without llm.json starts from when DEEPSEEK_API_KEY is set. Pure; the service saves and installs them.
 */
import { apiKeyError, apiKeyOriginFor, normaliseBaseUrl, type StoredLlmSettings } from './llm-settings.validation';

/** Default base URL of the legacy DEEPSEEK_* migration. */
export const LEGACY_DEEPSEEK_BASE_URL = 'https://api.deepseek.com';

/**
 * The migrated settings (the key bound to the origin of DEEPSEEK_API_BASE; DEEPSEEK_MODEL is ignored), null without a
 * key, `invalid` when the base URL or the key cannot be used.
 */
export function legacySettings(rawKey: string | null | undefined, rawBase: string | null | undefined): StoredLlmSettings | 'invalid' | null {
  const key = rawKey?.trim() ?? '';
  if (key === '') return null;
  const base = normaliseBaseUrl('openai_compatible.base_url', rawBase?.trim() || LEGACY_DEEPSEEK_BASE_URL, 'openai_compatible');
  if ('error' in base || base.value === '' || apiKeyError(key) !== null) return 'invalid';
  return {
    openaiCompatible: { baseUrl: base.value, apiKey: key, apiKeyOrigin: apiKeyOriginFor(base.value) },
    ollama: { baseUrl: '' },
  };
}
