import type { ProblemFieldError } from '../common/problem-details';
import { applyAnthropicUpdate, EMPTY_ANTHROPIC_SETTINGS, isAnthropicReady, parseAnthropic, serialiseAnthropic } from './anthropic-settings';
import { ANTHROPIC_RULES } from './llm-settings.validation';
import { parseSettingsFile, serialiseSettingsFile } from './llm-settings-store';

function apply(current = EMPTY_ANTHROPIC_SETTINGS, raw: unknown) {
  const errors: ProblemFieldError[] = [];
  const next = applyAnthropicUpdate(current, raw, errors, ANTHROPIC_RULES);
  return { next, errors };
}

describe('Anthropic settings', () => {
  it('Scenario: an Anthropic key entered without a base URL is for the public API', () => {
    const { next, errors } = apply(undefined, { api_key: ' sk-ant-1 ' });
    expect(errors).toEqual([]);
    expect(next).toEqual({ baseUrl: 'https://api.anthropic.com', apiKey: 'sk-ant-1', apiKeyOrigin: 'https://api.anthropic.com' });
    expect(isAnthropicReady(next)).toBe(true);
    // a trailing /v1 is the SDK's to add
    expect(apply(undefined, { base_url: 'https://proxy.example/anthropic/v1/', api_key: 'k' }).next.baseUrl).toBe('https://proxy.example/anthropic');
  });

  it('Scenario: the stored Anthropic key never follows its base URL to another origin', () => {
    const stored = apply(undefined, { base_url: 'https://api.anthropic.com', api_key: 'sk-ant-1' }).next;
    // omitted: kept as it is
    expect(apply(stored, undefined).next).toEqual(stored);
    // same origin, no key: kept
    expect(apply(stored, { base_url: 'https://api.anthropic.com/' }).errors).toEqual([]);
    const moved = apply(stored, { base_url: 'https://elsewhere.example' });
    expect(moved.errors.map((error) => error.field)).toEqual(['anthropic.api_key']);
    // a new key for the new origin is fine; clearing forgets the key
    expect(apply(stored, { base_url: 'https://elsewhere.example', api_key: 'sk-2' }).next.apiKeyOrigin).toBe('https://elsewhere.example');
    expect(apply(stored, { clear_api_key: true }).next).toEqual({ baseUrl: '', apiKey: '', apiKeyOrigin: '' });
    expect(apply(stored, { clear_api_key: true, api_key: 'x' }).errors.map((error) => error.field)).toEqual(['anthropic.api_key']);
    expect(apply(stored, 'nope').errors).toEqual([{ field: 'anthropic', message: 'anthropic must be an object' }]);
  });

  it('keeps no key without a base URL to send it to, and a base URL alone is not ready', () => {
    const urlOnly = apply(undefined, { base_url: 'https://api.anthropic.com' }).next;
    expect(isAnthropicReady(urlOnly)).toBe(false);
  });

  it('round-trips through the settings file, and an invalid entry fails the file', () => {
    const anthropic = apply(undefined, { api_key: 'sk-ant-1' }).next;
    const text = serialiseSettingsFile({ openaiCompatible: { baseUrl: '', apiKey: '', apiKeyOrigin: '' }, ollama: { baseUrl: '' }, anthropic });
    expect(JSON.parse(text).anthropic).toEqual(serialiseAnthropic(anthropic));
    expect(parseSettingsFile(text).anthropic).toEqual(anthropic);
    expect(parseAnthropic({ base_url: 'ftp://x', api_key: 'k' }, ANTHROPIC_RULES)).toBeNull();
    expect(() => parseSettingsFile(JSON.stringify({ version: 2, anthropic: { api_key: 7 } }))).toThrow('invalid LLM settings file');
  });
});
