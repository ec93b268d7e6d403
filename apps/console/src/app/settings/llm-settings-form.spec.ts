import { ApiError } from '../core/api/api-error';
import {
  buildTestRequest,
  buildUpdateRequest,
  draftFromSettings,
  mapServerError,
  secretOrigin,
  storedKeyKept,
  validateDraft,
  type LlmSettingsDraft,
} from './llm-settings-form';

const saved = {
  configured: true,
  openai_compatible: { base_url: 'https://api.example.com/v1', ready: true, api_key_configured: true },
  ollama: { base_url: '', ready: false },
};

function draft(overrides: Partial<LlmSettingsDraft> = {}): LlmSettingsDraft {
  return { ...draftFromSettings(null), ...overrides };
}

describe('LLM settings form', () => {
  it('starts from the saved settings without the key', () => {
    expect(draftFromSettings(saved, 'ollama')).toEqual({
      tab: 'ollama',
      apiBaseUrl: 'https://api.example.com/v1',
      apiKey: '',
      apiKeyConfigured: true,
      clearApiKey: false,
      ollamaBaseUrl: '',
      savedApiBaseUrl: 'https://api.example.com/v1',
      anthropicBaseUrl: '',
      anthropicKey: '',
      anthropicKeyConfigured: false,
      clearAnthropicKey: false,
      savedAnthropicBaseUrl: '',
    });
  });

  it('Scenario: the visible tab needs a valid URL; the API key is optional', () => {
    expect(validateDraft(draft())).toEqual({ apiBaseUrl: 'settings.error.baseUrlRequired' });
    expect(validateDraft(draft({ apiBaseUrl: 'http://127.0.0.1:1234/v1' }))).toEqual({});
    expect(validateDraft(draft({ apiBaseUrl: 'ftp://x', apiKey: 'k' }))).toEqual({ apiBaseUrl: 'settings.error.invalidUrl' });
    expect(validateDraft(draft({ apiBaseUrl: 'https://x/v1', apiKey: 'k' }))).toEqual({});
    expect(validateDraft(draft({ tab: 'ollama' }))).toEqual({ ollamaBaseUrl: 'settings.error.ollamaRequired' });
    expect(validateDraft(draft({ tab: 'ollama', ollamaBaseUrl: 'localhost:11434' }))).toEqual({
      ollamaBaseUrl: 'settings.error.invalidUrl',
    });
  });

  it('Scenario: a stored key may stay blank, also when it is being cleared', () => {
    const stored = draftFromSettings(saved);
    expect(validateDraft(stored)).toEqual({});
    expect(validateDraft({ ...stored, clearApiKey: true })).toEqual({});
  });

  it('Scenario: a stored key is kept only on the origin it was saved for', () => {
    const stored = draftFromSettings(saved);
    for (const url of ['https://api.example.com/v2', 'HTTPS://API.EXAMPLE.COM.:443/', '']) {
      expect([url, storedKeyKept({ ...stored, apiBaseUrl: url })]).toEqual([url, true]);
    }
    for (const url of ['https://other.example.com/v1', 'http://api.example.com/v1', 'https://api.example.com:8443/v1']) {
      expect([url, storedKeyKept({ ...stored, apiBaseUrl: url })]).toEqual([url, false]);
      expect(validateDraft({ ...stored, apiBaseUrl: url })).toEqual({ apiKey: 'settings.error.keyOriginMoved' });
      expect(validateDraft({ ...stored, apiBaseUrl: url, apiKey: 'sk-new' })).toEqual({});
    }
    expect(validateDraft({ ...stored, apiBaseUrl: 'nope' })).toEqual({ apiBaseUrl: 'settings.error.invalidUrl' });
    expect(storedKeyKept({ ...stored, clearApiKey: true })).toBe(false);
    expect(secretOrigin('http://[0:0::1]:80/x')).toBe('http://[::1]');
    expect(secretOrigin('ftp://x')).toBeNull();
  });

  it('Scenario: the server refusing a key for a moved origin lands at the API key field', () => {
    const message = 'The base URL moved to another origin; enter the API key for it again (or clear the stored key)';
    expect(mapServerError(new ApiError(422, message, [{ field: 'openai_compatible.api_key', message }]))).toEqual({
      fields: { apiKey: message },
      general: null,
    });
  });

  it('Scenario: the payload has every profile, the key only when typed, and test adds the tab', () => {
    expect(
      buildUpdateRequest(
        draft({ apiBaseUrl: ' https://x/v1 ', apiKey: '  sk-1 ', ollamaBaseUrl: ' http://o:11434 ', anthropicKey: ' sk-ant-1 ' }),
      ),
    ).toEqual({
      openai_compatible: { base_url: 'https://x/v1', api_key: 'sk-1', clear_api_key: false },
      ollama: { base_url: 'http://o:11434' },
      anthropic: { base_url: '', api_key: 'sk-ant-1', clear_api_key: false },
    });
    expect(buildUpdateRequest(draftFromSettings(saved))).toEqual({
      openai_compatible: { base_url: 'https://api.example.com/v1', clear_api_key: false },
      ollama: { base_url: '' },
      anthropic: { base_url: '', clear_api_key: false },
    });
    expect(buildTestRequest(draft({ tab: 'ollama', ollamaBaseUrl: 'http://o' })).provider).toBe('ollama');
  });

  it('Scenario: the Anthropic tab needs a key, and an empty base URL means the public API', () => {
    expect(validateDraft(draft({ tab: 'anthropic' }))).toEqual({ anthropicKey: 'settings.error.anthropicKeyRequired' });
    expect(validateDraft(draft({ tab: 'anthropic', anthropicKey: 'sk-ant-1' }))).toEqual({});
    const stored = { tab: 'anthropic' as const, anthropicKeyConfigured: true, savedAnthropicBaseUrl: 'https://api.anthropic.com' };
    expect(validateDraft(draft(stored))).toEqual({});
    expect(validateDraft(draft({ ...stored, anthropicBaseUrl: 'https://proxy.example' }))).toEqual({
      anthropicKey: 'settings.error.keyOriginMoved',
    });
    expect(validateDraft(draft({ ...stored, anthropicBaseUrl: 'nope' }))).toEqual({ anthropicBaseUrl: 'settings.error.invalidUrl' });
  });

  it('Scenario: API validation messages land at their field', () => {
    const error = new ApiError(422, 'validation failed', [
      { field: 'openai_compatible.base_url', message: 'openai_compatible.base_url must not contain credentials' },
      { field: 'ollama.base_url', message: 'ollama.base_url is too long' },
    ]);
    expect(mapServerError(error)).toEqual({
      fields: {
        apiBaseUrl: 'openai_compatible.base_url must not contain credentials',
        ollamaBaseUrl: 'ollama.base_url is too long',
      },
      general: null,
    });
  });

  it('places a detail that names a field, and shows other details as general', () => {
    expect(mapServerError(new ApiError(422, 'openai_compatible.api_key is too long'))).toEqual({
      fields: { apiKey: 'openai_compatible.api_key is too long' },
      general: null,
    });
    expect(mapServerError(new ApiError(422, 'at least one provider connection is required'))).toEqual({
      fields: {},
      general: 'at least one provider connection is required',
    });
    expect(mapServerError(new ApiError(400, 'Authentication failed: check the API key'))).toEqual({
      fields: {},
      general: 'Authentication failed: check the API key',
    });
  });
});
