/**
 * LLM settings draft, client-side validation and payloads, and mapping of the API's validation
 * errors (problem+json `errors[].field`, e.g. `openai_compatible.base_url`) onto the form fields.
 */
import type {
  LlmProvider,
  PublicLlmSettings,
  TestLlmConnectionRequest,
  UpdateLlmSettingsRequest,
} from '@cashcode/contracts';

import { ApiError } from '../core/api/api-error';
import type { MessageKey } from '../core/i18n/i18n';

export type SettingsTab = LlmProvider;

export interface LlmSettingsDraft {
  tab: SettingsTab;
  apiBaseUrl: string;
  /** write-only: never filled from the server */
  apiKey: string;
  apiKeyConfigured: boolean;
  clearApiKey: boolean;
  ollamaBaseUrl: string;
  /** the saved OpenAI-compatible base URL: the stored key is bound to its origin */
  savedApiBaseUrl: string;
  /** Anthropic: empty base URL with a key → the public API */
  anthropicBaseUrl: string;
  /** write-only: never filled from the server */
  anthropicKey: string;
  anthropicKeyConfigured: boolean;
  clearAnthropicKey: boolean;
  savedAnthropicBaseUrl: string;
}

/** The base URL a key entered without one is for. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

export type FieldName = 'apiBaseUrl' | 'apiKey' | 'ollamaBaseUrl' | 'anthropicBaseUrl' | 'anthropicKey';
export type ClientFieldErrors = Partial<Record<FieldName, MessageKey>>;
export type ServerFieldErrors = Partial<Record<FieldName, string>>;

export const FIELD_TABS: Record<FieldName, SettingsTab> = {
  apiBaseUrl: 'openai_compatible',
  apiKey: 'openai_compatible',
  ollamaBaseUrl: 'ollama',
  anthropicBaseUrl: 'anthropic',
  anthropicKey: 'anthropic',
};

const SERVER_FIELDS: Record<string, FieldName> = {
  'openai_compatible.base_url': 'apiBaseUrl',
  'openai_compatible.api_key': 'apiKey',
  'openai_compatible.clear_api_key': 'apiKey',
  'ollama.base_url': 'ollamaBaseUrl',
  'anthropic.base_url': 'anthropicBaseUrl',
  'anthropic.api_key': 'anthropicKey',
  'anthropic.clear_api_key': 'anthropicKey',
};

export function draftFromSettings(settings: PublicLlmSettings | null, tab: SettingsTab = 'openai_compatible'): LlmSettingsDraft {
  return {
    tab,
    apiBaseUrl: settings?.openai_compatible.base_url ?? '',
    apiKey: '',
    apiKeyConfigured: settings?.openai_compatible.api_key_configured ?? false,
    clearApiKey: false,
    ollamaBaseUrl: settings?.ollama.base_url ?? '',
    savedApiBaseUrl: settings?.openai_compatible.base_url ?? '',
    anthropicBaseUrl: settings?.anthropic?.base_url ?? '',
    anthropicKey: '',
    anthropicKeyConfigured: settings?.anthropic?.api_key_configured ?? false,
    clearAnthropicKey: false,
    savedAnthropicBaseUrl: settings?.anthropic?.base_url ?? '',
  };
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The origin (scheme, host, port) the server binds a stored key to, or null for no http(s) URL. Mirrors the server's
 * rule (WHATWG URL parsing, one trailing dot of a host name dropped); the server has the last word.
 */
export function secretOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return null;
  let host = url.hostname;
  if (!host.startsWith('[') && host.endsWith('.') && host.length > 1) host = host.slice(0, -1);
  return `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}`;
}

/**
 * Whether a blank key field keeps the stored key: a key is stored, it is not being cleared, and the base URL stays on
 * the origin the key was saved for (or is emptied). Otherwise the key has to be entered again.
 */
export function storedKeyKept(draft: LlmSettingsDraft): boolean {
  if (!draft.apiKeyConfigured || draft.clearApiKey) return false;
  const url = draft.apiBaseUrl.trim();
  if (url === '') return true;
  const saved = secretOrigin(draft.savedApiBaseUrl);
  return saved !== null && saved === secretOrigin(url);
}

/** Whether a blank Anthropic key keeps the stored one (an empty base URL means the public API). */
export function storedAnthropicKeyKept(draft: LlmSettingsDraft): boolean {
  if (!draft.anthropicKeyConfigured || draft.clearAnthropicKey) return false;
  const saved = secretOrigin(draft.savedAnthropicBaseUrl);
  return saved !== null && saved === secretOrigin(draft.anthropicBaseUrl.trim() || ANTHROPIC_DEFAULT_BASE_URL);
}

/** Validates the visible tab only. */
export function validateDraft(draft: LlmSettingsDraft): ClientFieldErrors {
  const errors: ClientFieldErrors = {};
  if (draft.tab === 'openai_compatible') {
    const url = draft.apiBaseUrl.trim();
    if (url === '') errors.apiBaseUrl = 'settings.error.baseUrlRequired';
    else if (!isHttpUrl(url)) errors.apiBaseUrl = 'settings.error.invalidUrl';
    // the key is optional (keyless local servers); a stored key cannot follow the URL to another origin
    if (draft.apiKey.trim() === '' && !storedKeyKept(draft)) {
      const moved = draft.apiKeyConfigured && !draft.clearApiKey && errors.apiBaseUrl === undefined;
      if (moved) errors.apiKey = 'settings.error.keyOriginMoved';
    }
  } else if (draft.tab === 'anthropic') {
    const url = draft.anthropicBaseUrl.trim();
    if (url !== '' && !isHttpUrl(url)) errors.anthropicBaseUrl = 'settings.error.invalidUrl';
    // Anthropic needs a key: a new one, or the stored one on its origin
    if (draft.anthropicKey.trim() === '' && !storedAnthropicKeyKept(draft) && errors.anthropicBaseUrl === undefined) {
      const moved = draft.anthropicKeyConfigured && !draft.clearAnthropicKey;
      errors.anthropicKey = moved ? 'settings.error.keyOriginMoved' : 'settings.error.anthropicKeyRequired';
    }
  } else {
    const url = draft.ollamaBaseUrl.trim();
    if (url === '') errors.ollamaBaseUrl = 'settings.error.ollamaRequired';
    else if (!isHttpUrl(url)) errors.ollamaBaseUrl = 'settings.error.invalidUrl';
  }
  return errors;
}

/** Every profile, always; a key only when typed (blank keeps the stored one). */
export function buildUpdateRequest(draft: LlmSettingsDraft): UpdateLlmSettingsRequest {
  const openai: UpdateLlmSettingsRequest['openai_compatible'] = {
    base_url: draft.apiBaseUrl.trim(),
    clear_api_key: draft.clearApiKey,
  };
  const key = draft.apiKey.trim();
  if (key !== '' && !draft.clearApiKey) openai.api_key = key;
  const anthropic: NonNullable<UpdateLlmSettingsRequest['anthropic']> = {
    base_url: draft.anthropicBaseUrl.trim(),
    clear_api_key: draft.clearAnthropicKey,
  };
  const anthropicKey = draft.anthropicKey.trim();
  if (anthropicKey !== '' && !draft.clearAnthropicKey) anthropic.api_key = anthropicKey;
  return { openai_compatible: openai, ollama: { base_url: draft.ollamaBaseUrl.trim() }, anthropic };
}

export function buildTestRequest(draft: LlmSettingsDraft): TestLlmConnectionRequest {
  return { ...buildUpdateRequest(draft), provider: draft.tab };
}

export interface MappedServerError {
  fields: ServerFieldErrors;
  general: string | null;
}

/** Puts API validation messages at their field; anything else becomes the general message. */
export function mapServerError(error: unknown): MappedServerError {
  if (!(error instanceof ApiError)) return { fields: {}, general: error instanceof Error ? error.message : String(error) };
  const fields: ServerFieldErrors = {};
  const unplaced: string[] = [];
  for (const entry of error.fieldErrors) {
    const field = SERVER_FIELDS[entry.field];
    if (field && fields[field] === undefined) fields[field] = entry.message;
    else if (!field) unplaced.push(entry.message);
  }
  if (error.fieldErrors.length === 0) {
    // the server's details name the field first ("openai_compatible.base_url must be …")
    const match = Object.keys(SERVER_FIELDS).find((name) => error.detail.startsWith(`${name} `));
    if (match) return { fields: { [SERVER_FIELDS[match]]: error.detail }, general: null };
    return { fields, general: error.detail };
  }
  if (Object.keys(fields).length === 0) return { fields, general: error.detail };
  return { fields, general: unplaced.length > 0 ? unplaced.join('; ') : null };
}
