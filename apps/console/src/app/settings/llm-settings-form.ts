/**
 * LLM settings draft, client-side validation and payloads (spec §15.9), and mapping of the API's validation
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
}

export type FieldName = 'apiBaseUrl' | 'apiKey' | 'ollamaBaseUrl';
export type ClientFieldErrors = Partial<Record<FieldName, MessageKey>>;
export type ServerFieldErrors = Partial<Record<FieldName, string>>;

export const FIELD_TABS: Record<FieldName, SettingsTab> = {
  apiBaseUrl: 'openai_compatible',
  apiKey: 'openai_compatible',
  ollamaBaseUrl: 'ollama',
};

const SERVER_FIELDS: Record<string, FieldName> = {
  'openai_compatible.base_url': 'apiBaseUrl',
  'openai_compatible.api_key': 'apiKey',
  'openai_compatible.clear_api_key': 'apiKey',
  'ollama.base_url': 'ollamaBaseUrl',
};

export function draftFromSettings(settings: PublicLlmSettings | null, tab: SettingsTab = 'openai_compatible'): LlmSettingsDraft {
  return {
    tab,
    apiBaseUrl: settings?.openai_compatible.base_url ?? '',
    apiKey: '',
    apiKeyConfigured: settings?.openai_compatible.api_key_configured ?? false,
    clearApiKey: false,
    ollamaBaseUrl: settings?.ollama.base_url ?? '',
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

/** Validates the visible tab only. */
export function validateDraft(draft: LlmSettingsDraft): ClientFieldErrors {
  const errors: ClientFieldErrors = {};
  if (draft.tab === 'openai_compatible') {
    const url = draft.apiBaseUrl.trim();
    if (url === '') errors.apiBaseUrl = 'settings.error.baseUrlRequired';
    else if (!isHttpUrl(url)) errors.apiBaseUrl = 'settings.error.invalidUrl';
    const keyKept = draft.apiKeyConfigured && !draft.clearApiKey;
    if (draft.apiKey.trim() === '' && !keyKept) errors.apiKey = 'settings.error.keyRequired';
  } else {
    const url = draft.ollamaBaseUrl.trim();
    if (url === '') errors.ollamaBaseUrl = 'settings.error.ollamaRequired';
    else if (!isHttpUrl(url)) errors.ollamaBaseUrl = 'settings.error.invalidUrl';
  }
  return errors;
}

/** Both profiles, always; the key only when typed (blank keeps the stored one). */
export function buildUpdateRequest(draft: LlmSettingsDraft): UpdateLlmSettingsRequest {
  const openai: UpdateLlmSettingsRequest['openai_compatible'] = {
    base_url: draft.apiBaseUrl.trim(),
    clear_api_key: draft.clearApiKey,
  };
  const key = draft.apiKey.trim();
  if (key !== '' && !draft.clearApiKey) openai.api_key = key;
  return { openai_compatible: openai, ollama: { base_url: draft.ollamaBaseUrl.trim() } };
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
    // reference-style details name the field first ("openai_compatible.base_url must be …")
    const match = Object.keys(SERVER_FIELDS).find((name) => error.detail.startsWith(`${name} `));
    if (match) return { fields: { [SERVER_FIELDS[match]]: error.detail }, general: null };
    return { fields, general: error.detail };
  }
  if (Object.keys(fields).length === 0) return { fields, general: error.detail };
  return { fields, general: unplaced.length > 0 ? unplaced.join('; ') : null };
}
