import { LlmSettingsError } from './llm-settings.errors';
import {
  EMPTY_LLM_SETTINGS,
  applySettingsUpdate,
  isProviderReady,
  normaliseBaseUrl,
  requireBackgroundProviderReady,
  requireDraftProviderReady,
  requireReadyProvider,
  toPublicSettings,
  usableApiKey,
  type LlmSettingsUpdate,
  type StoredLlmSettings,
} from './llm-settings.validation';

const STORED: StoredLlmSettings = {
  openaiCompatible: { baseUrl: 'https://api.example.com/v1', apiKey: 'sk-stored-key', apiKeyOrigin: 'https://api.example.com' },
  ollama: { baseUrl: '' },
};
const MOVED = 'The base URL moved to another origin; enter the API key for it again (or clear the stored key)';

function update(openai: LlmSettingsUpdate['openai_compatible'], ollama: LlmSettingsUpdate['ollama'] = {}): LlmSettingsUpdate {
  return { openai_compatible: openai, ollama };
}

function settingsError(run: () => unknown): LlmSettingsError {
  try {
    run();
  } catch (error) {
    if (error instanceof LlmSettingsError) return error;
    throw error;
  }
  throw new Error('expected an LlmSettingsError');
}

describe('LLM settings validation', () => {
  describe('normaliseBaseUrl', () => {
    it('Scenario: URLs are trimmed and lose trailing slashes', () => {
      expect(normaliseBaseUrl('openai_compatible.base_url', '  https://api.example.com/v1/  ', 'openai_compatible')).toEqual(
        { value: 'https://api.example.com/v1' },
      );
      expect(normaliseBaseUrl('openai_compatible.base_url', 'http://localhost:8080//', 'openai_compatible')).toEqual({
        value: 'http://localhost:8080',
      });
      expect(normaliseBaseUrl('openai_compatible.base_url', '   ', 'openai_compatible')).toEqual({ value: '' });
    });

    it('Scenario: an Ollama URL loses a trailing /v1', () => {
      expect(normaliseBaseUrl('ollama.base_url', 'http://127.0.0.1:11434/v1/', 'ollama')).toEqual({
        value: 'http://127.0.0.1:11434',
      });
      expect(normaliseBaseUrl('ollama.base_url', 'http://[::1]:11434/proxy/v1', 'ollama')).toEqual({
        value: 'http://[::1]:11434/proxy',
      });
      // the OpenAI-compatible URL keeps its /v1
      expect(normaliseBaseUrl('openai_compatible.base_url', 'http://127.0.0.1:11434/v1/', 'openai_compatible')).toEqual({
        value: 'http://127.0.0.1:11434/v1',
      });
    });

    it('Scenario: invalid URLs are rejected with the field name in the message', () => {
      const field = 'ollama.base_url';
      const cases: Array<[unknown, string]> = [
        [42, `${field} must be a string`],
        [`http://example.com/${'a'.repeat(2048)}`, `${field} is too long`],
        ['ftp://example.com', `${field} must be an http or https URL`],
        ['example.com', `${field} must be an http or https URL`],
        ['http://', `${field} must be an http or https URL`],
        ['http:example.com', `${field} must be an http or https URL`],
        ['http://user:pass@example.com', `${field} must not contain credentials`],
        ['http://user@example.com', `${field} must not contain credentials`],
        ['http://example.com/?a=1', `${field} must not contain query or fragment`],
        ['http://example.com/#top', `${field} must not contain query or fragment`],
        ['http://example.com?', `${field} must not contain query or fragment`],
      ];
      for (const [raw, message] of cases) {
        expect(normaliseBaseUrl(field, raw, 'ollama')).toEqual({ error: message });
      }
    });

    it('Scenario: exactly 2048 characters is accepted', () => {
      const url = `http://example.com/${'a'.repeat(2048 - 'http://example.com/'.length)}`;
      expect(url).toHaveLength(2048);
      expect(normaliseBaseUrl('openai_compatible.base_url', url, 'openai_compatible')).toEqual({ value: url });
    });
  });

  describe('applySettingsUpdate', () => {
    it('Scenario: a missing, null or blank api_key keeps the stored key', () => {
      for (const apiKey of [undefined, null, '', '   ']) {
        const next = applySettingsUpdate(STORED, update({ base_url: 'https://api.example.com/other', api_key: apiKey }));
        expect(next.openaiCompatible).toEqual({
          baseUrl: 'https://api.example.com/other',
          apiKey: 'sk-stored-key',
          apiKeyOrigin: 'https://api.example.com',
        });
      }
    });

    it('Scenario: a base URL on another origin without a new key is refused on openai_compatible.api_key', () => {
      for (const apiKey of [undefined, null, '', '   ']) {
        const error = settingsError(() => applySettingsUpdate(STORED, update({ base_url: 'https://other.example.com/v1', api_key: apiKey })));
        expect(error.code).toBe('invalid_settings');
        expect(error.message).toBe(MOVED);
        expect(error.fieldErrors).toEqual([{ field: 'openai_compatible.api_key', message: MOVED }]);
      }
    });

    it('Scenario: a new key on another origin is bound to that origin; clearing sends no key', () => {
      const moved = applySettingsUpdate(STORED, update({ base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-new' }));
      expect(moved.openaiCompatible).toEqual({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-new', apiKeyOrigin: 'http://127.0.0.1:9' });
      const cleared = applySettingsUpdate(STORED, update({ base_url: 'http://127.0.0.1:9/v1', clear_api_key: true }));
      expect(cleared.openaiCompatible).toEqual({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: '', apiKeyOrigin: '' });
    });

    it('Scenario: an emptied base URL keeps the key and its origin; only that origin gets it back', () => {
      const parked = applySettingsUpdate(STORED, update({ base_url: '' }, { base_url: 'http://127.0.0.1:11434' }));
      expect(parked.openaiCompatible).toEqual({ baseUrl: '', apiKey: 'sk-stored-key', apiKeyOrigin: 'https://api.example.com' });
      expect(toPublicSettings(parked).openai_compatible.api_key_configured).toBe(true);
      expect(applySettingsUpdate(parked, update({ base_url: 'https://api.example.com/v2' })).openaiCompatible.apiKey).toBe('sk-stored-key');
      expect(settingsError(() => applySettingsUpdate(parked, update({ base_url: 'https://evil.example' }))).message).toBe(MOVED);
    });

    it('Scenario: a key saved without a base URL is bound to nothing', () => {
      const unbound = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({ base_url: '', api_key: 'sk-u' }, { base_url: 'http://o' }));
      expect(unbound.openaiCompatible).toEqual({ baseUrl: '', apiKey: 'sk-u', apiKeyOrigin: '' });
      const error = settingsError(() => applySettingsUpdate(unbound, update({ base_url: 'https://api.example.com' })));
      expect(error.fieldErrors).toEqual([
        {
          field: 'openai_compatible.api_key',
          message: 'The stored API key was saved without a base URL; enter the API key for this base URL again (or clear the stored key)',
        },
      ]);
    });

    it('Scenario: settings whose key is bound to another origin than their base URL make no key usable', () => {
      const tampered: StoredLlmSettings = {
        openaiCompatible: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-a', apiKeyOrigin: 'https://api.example.com' },
        ollama: { baseUrl: '' },
      };
      expect(usableApiKey(tampered.openaiCompatible)).toBe('');
      // ready without a key (a keyless server): requests carry no key at all
      expect(isProviderReady(tampered, 'openai_compatible')).toBe(true);
      expect(toPublicSettings(tampered).openai_compatible).toEqual({
        base_url: 'http://127.0.0.1:9/v1',
        ready: true,
        api_key_configured: false,
      });
      expect(usableApiKey(STORED.openaiCompatible)).toBe('sk-stored-key');
    });

    it('Scenario: a non-blank api_key replaces the stored key, trimmed', () => {
      const next = applySettingsUpdate(STORED, update({ base_url: 'https://api.example.com', api_key: '  sk-new  ' }));
      expect(next.openaiCompatible.apiKey).toBe('sk-new');
    });

    it('Scenario: clear_api_key empties the key', () => {
      const next = applySettingsUpdate(STORED, update({ base_url: 'https://api.example.com', clear_api_key: true }));
      expect(next.openaiCompatible.apiKey).toBe('');
      expect(toPublicSettings(next).openai_compatible).toEqual({
        base_url: 'https://api.example.com',
        ready: true,
        api_key_configured: false,
      });
    });

    it('Scenario: api_key with clear_api_key is rejected', () => {
      const error = settingsError(() => applySettingsUpdate(STORED, update({ api_key: 'sk-x', clear_api_key: true })));
      expect(error.code).toBe('invalid_settings');
      expect(error.message).toBe('api_key and clear_api_key cannot be submitted together');
      // a blank key alongside clear is fine
      expect(applySettingsUpdate(STORED, update({ api_key: ' ', clear_api_key: true })).openaiCompatible.apiKey).toBe('');
    });

    it('Scenario: an API key longer than 16384 characters is rejected', () => {
      const error = settingsError(() => applySettingsUpdate(STORED, update({ api_key: 'k'.repeat(16385) })));
      expect(error.message).toBe('openai_compatible.api_key is too long');
      expect(error.fieldErrors).toEqual([{ field: 'openai_compatible.api_key', message: 'openai_compatible.api_key is too long' }]);
      expect(applySettingsUpdate(STORED, update({ api_key: 'k'.repeat(16384) })).openaiCompatible.apiKey).toHaveLength(16384);
    });

    it('Scenario: every invalid field is reported', () => {
      const error = settingsError(() =>
        applySettingsUpdate(STORED, update({ base_url: 'ftp://x', clear_api_key: 'yes' }, { base_url: 7 })),
      );
      expect(error.fieldErrors).toEqual([
        { field: 'openai_compatible.base_url', message: 'openai_compatible.base_url must be an http or https URL' },
        { field: 'ollama.base_url', message: 'ollama.base_url must be a string' },
        { field: 'openai_compatible.clear_api_key', message: 'openai_compatible.clear_api_key must be a boolean' },
      ]);
    });

    it('Scenario: omitted base URLs mean empty', () => {
      expect(applySettingsUpdate(STORED, update({}, {}))).toEqual({
        openaiCompatible: { baseUrl: '', apiKey: 'sk-stored-key', apiKeyOrigin: 'https://api.example.com' },
        ollama: { baseUrl: '' },
      });
    });
  });

  describe('readiness', () => {
    it('Scenario: An OpenAI-compatible base URL without an API key is a ready connection', () => {
      const keyless = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({ base_url: 'http://127.0.0.1:1234/v1' }));
      expect(() => requireReadyProvider(keyless)).not.toThrow();
      expect(toPublicSettings(keyless).openai_compatible).toEqual({ base_url: 'http://127.0.0.1:1234/v1', ready: true, api_key_configured: false });
      const next = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({}));
      const error = settingsError(() => requireReadyProvider(next));
      expect(error.code).toBe('no_provider_ready');
      expect(error.message).toBe('at least one provider connection is required');
    });

    it('Scenario: Ollama alone is enough', () => {
      const next = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({}, { base_url: 'http://127.0.0.1:11434' }));
      expect(() => requireReadyProvider(next)).not.toThrow();
      expect(toPublicSettings(next)).toEqual({
        configured: true,
        openai_compatible: { base_url: '', ready: false, api_key_configured: false },
        ollama: { base_url: 'http://127.0.0.1:11434', ready: true },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
    });

    it('Scenario: the draft of /test must make the chosen provider ready', () => {
      const draft = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({}));
      const error = settingsError(() => requireDraftProviderReady(draft, 'openai_compatible'));
      expect(error.code).toBe('provider_not_ready');
      expect(error.fieldErrors[0].field).toBe('openai_compatible.base_url');
      const keyless = applySettingsUpdate(EMPTY_LLM_SETTINGS, update({ base_url: 'https://api.example.com' }));
      expect(() => requireDraftProviderReady(keyless, 'openai_compatible')).not.toThrow();
      expect(settingsError(() => requireDraftProviderReady(draft, 'ollama')).fieldErrors[0].field).toBe('ollama.base_url');
    });

    it('Scenario: public settings before any save are all empty', () => {
      expect(toPublicSettings(EMPTY_LLM_SETTINGS)).toEqual({
        configured: false,
        openai_compatible: { base_url: '', ready: false, api_key_configured: false },
        ollama: { base_url: '', ready: false },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
    });
  });

  describe('background model', () => {
    it('Scenario: a background model is stored trimmed and shown in the public settings', () => {
      const next = applySettingsUpdate(STORED, {
        ...update({ base_url: 'https://api.example.com/v1' }),
        background: { provider: 'openai_compatible', model: '  deepseek-chat ' },
      });
      expect(next.background).toEqual({ provider: 'openai_compatible', model: 'deepseek-chat' });
      expect(toPublicSettings(next).background).toEqual({ provider: 'openai_compatible', model: 'deepseek-chat' });
      expect(() => requireBackgroundProviderReady(next)).not.toThrow();
    });

    it('Scenario: an omitted background keeps the stored one and null clears it', () => {
      const current: StoredLlmSettings = { ...STORED, background: { provider: 'openai_compatible', model: 'm1' } };
      expect(applySettingsUpdate(current, update({ base_url: 'https://api.example.com' })).background).toEqual({
        provider: 'openai_compatible',
        model: 'm1',
      });
      const cleared = applySettingsUpdate(current, { ...update({ base_url: 'https://api.example.com' }), background: null });
      expect(cleared.background).toBeUndefined();
      expect(toPublicSettings(cleared).background).toBeNull();
    });

    it('Scenario: an invalid background model is rejected field by field', () => {
      const error = settingsError(() =>
        applySettingsUpdate(STORED, { ...update({}), background: { provider: 'gpt', model: ' ', extra: 1 } }),
      );
      expect(error.code).toBe('invalid_settings');
      expect(error.fieldErrors.map((e) => e.field)).toEqual(['background.extra', 'background.provider', 'background.model']);
      expect(settingsError(() => applySettingsUpdate(STORED, { ...update({}), background: 'm1' })).fieldErrors).toEqual([
        { field: 'background', message: 'background must be an object or null' },
      ]);
    });

    it('Scenario: the background provider must be ready', () => {
      const next = applySettingsUpdate(STORED, {
        ...update({ base_url: 'https://api.example.com/v1' }),
        background: { provider: 'ollama', model: 'llama3' },
      });
      const error = settingsError(() => requireBackgroundProviderReady(next));
      expect(error.code).toBe('invalid_settings');
      expect(error.fieldErrors[0]?.field).toBe('background.provider');
    });
  });
});
