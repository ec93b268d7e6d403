import { mkdtemp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config';
import { LlmSettingsFileError, LlmSettingsStore, parseSettingsFile, serialiseSettingsFile } from './llm-settings-store';

describe(LlmSettingsStore.name, () => {
  let root: string;
  let store: LlmSettingsStore;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'cc-llm-store-'));
    store = new LlmSettingsStore(loadConfig({ CASHCODE_CONFIG_DIR: join(root, 'config') }, root));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('Scenario: the file lives at <config dir>/settings/llm.json', () => {
    expect(store.filePath).toBe(join(root, 'config', 'settings', 'llm.json'));
  });

  it('Scenario: a missing file loads as missing', async () => {
    await expect(store.load()).resolves.toEqual({ status: 'missing' });
  });

  it('Scenario: save writes version 2 with 2-space indent, a trailing newline, file 0600 in a 0700 directory', async () => {
    await store.save({
      openaiCompatible: { baseUrl: 'https://api.example.com', apiKey: 'sk-abc', apiKeyOrigin: 'https://api.example.com' },
      ollama: { baseUrl: '' },
    });
    const text = await readFile(store.filePath, 'utf8');
    expect(text).toBe(
      '{\n  "version": 2,\n  "openai_compatible": {\n    "base_url": "https://api.example.com",\n' +
        '    "api_key": "sk-abc",\n    "api_key_origin": "https://api.example.com"\n  },\n' +
        '  "ollama": {\n    "base_url": ""\n  }\n}\n',
    );
    expect((await stat(store.filePath)).mode & 0o777).toBe(0o600);
    expect((await stat(store.directory)).mode & 0o777).toBe(0o700);
    await expect(store.load()).resolves.toEqual({
      status: 'loaded',
      settings: {
        openaiCompatible: { baseUrl: 'https://api.example.com', apiKey: 'sk-abc', apiKeyOrigin: 'https://api.example.com' },
        ollama: { baseUrl: '' },
      },
    });
  });

  it('Scenario: the background model is saved and loaded; an invalid one is ignored', async () => {
    const settings = {
      openaiCompatible: { baseUrl: 'https://api.example.com', apiKey: 'sk-abc', apiKeyOrigin: 'https://api.example.com' },
      ollama: { baseUrl: '' },
      background: { provider: 'openai_compatible' as const, model: 'm-bg' },
    };
    await store.save(settings);
    expect(JSON.parse(await readFile(store.filePath, 'utf8'))).toMatchObject({
      background: { provider: 'openai_compatible', model: 'm-bg' },
    });
    await expect(store.load()).resolves.toEqual({ status: 'loaded', settings });
    const text = serialiseSettingsFile(settings).replace('"openai_compatible",', '"nope",');
    expect(parseSettingsFile(text).background).toBeUndefined();
  });

  it('Scenario: a version 1 file is accepted and its extra fields disappear on the next save', async () => {
    await mkdir(store.directory, { recursive: true });
    await writeFile(
      store.filePath,
      JSON.stringify({
        version: 1,
        active_provider: 'ollama',
        model: 'llama3',
        openai_compatible: { base_url: 'https://api.example.com/', api_key: 'sk-v1' },
        ollama: { base_url: 'http://127.0.0.1:11434/v1' },
      }),
    );
    const result = await store.load();
    expect(result).toEqual({
      status: 'loaded',
      settings: {
        // a file without api_key_origin binds its key to the origin of the base URL stored with it
        openaiCompatible: { baseUrl: 'https://api.example.com', apiKey: 'sk-v1', apiKeyOrigin: 'https://api.example.com' },
        ollama: { baseUrl: 'http://127.0.0.1:11434' },
      },
    });
    if (result.status !== 'loaded') throw new Error('not loaded');
    await store.save(result.settings);
    const saved = JSON.parse(await readFile(store.filePath, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(saved)).toEqual(['version', 'openai_compatible', 'ollama']);
    expect(saved['version']).toBe(2);
  });

  it('Scenario: corrupt JSON, another version or invalid values are load errors that never echo the content', async () => {
    await mkdir(store.directory, { recursive: true });
    const cases: Array<[string, string]> = [
      ['{"version": 2, "openai_compatible": {"api_key": "sk-secret-in-corrupt', 'unable to read the LLM settings file'],
      ['{"version": 3}', 'unsupported LLM settings version'],
      ['{"version": "2"}', 'unsupported LLM settings version'],
      ['[]', 'invalid LLM settings file'],
      ['{"version": 2, "openai_compatible": {"base_url": "ftp://x"}}', 'invalid LLM settings file'],
      ['{"version": 2, "openai_compatible": {"api_key": 5}}', 'invalid LLM settings file'],
      ['{"version": 2, "ollama": "http://x"}', 'invalid LLM settings file'],
      ['{"version": 2, "openai_compatible": {"api_key": "k", "api_key_origin": 7}}', 'invalid LLM settings file'],
      ['{"version": 2, "openai_compatible": {"api_key": "k", "api_key_origin": "ftp://x"}}', 'invalid LLM settings file'],
    ];
    for (const [content, reason] of cases) {
      await writeFile(store.filePath, content);
      await expect(store.load()).resolves.toEqual({ status: 'invalid', reason });
    }
  });

  it('Scenario: a file that cannot be read (a directory) is a load error', async () => {
    await mkdir(store.filePath, { recursive: true });
    await expect(store.load()).resolves.toEqual({ status: 'invalid', reason: 'unable to read the LLM settings file' });
  });

  it('Scenario: parse and serialise round-trip', () => {
    const settings = {
      openaiCompatible: { baseUrl: 'http://h:1/v1', apiKey: 'k', apiKeyOrigin: 'http://h:1' },
      ollama: { baseUrl: 'http://o' },
    };
    expect(parseSettingsFile(serialiseSettingsFile(settings))).toEqual(settings);
    expect(() => parseSettingsFile('nope')).toThrow(LlmSettingsFileError);
  });

  it('Scenario: a key stored without an origin is bound to the base URL it was stored with', () => {
    const legacy = (openai: Record<string, unknown>) =>
      parseSettingsFile(JSON.stringify({ version: 2, openai_compatible: openai, ollama: { base_url: '' } })).openaiCompatible;
    expect(legacy({ base_url: 'HTTPS://API.Example.com:443/v1/', api_key: 'k' })).toEqual({
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'k',
      apiKeyOrigin: 'https://api.example.com',
    });
    // no base URL: the key is bound to nothing and must be entered again before it is sent anywhere
    expect(legacy({ base_url: '', api_key: 'k' }).apiKeyOrigin).toBe('');
    // a recorded origin wins over the base URL (and is normalised); no key, no origin
    expect(legacy({ base_url: 'http://b.example', api_key: 'k', api_key_origin: 'HTTP://A.example:80' }).apiKeyOrigin).toBe(
      'http://a.example',
    );
    expect(legacy({ base_url: 'http://b.example', api_key: '', api_key_origin: 'http://a.example' }).apiKeyOrigin).toBe('');
  });

  it('Scenario: no api_key_origin is written when no key is stored', () => {
    const text = serialiseSettingsFile({
      openaiCompatible: { baseUrl: 'http://h:1/v1', apiKey: '', apiKeyOrigin: '' },
      ollama: { baseUrl: 'http://o' },
    });
    expect(JSON.parse(text)).toEqual({ version: 2, openai_compatible: { base_url: 'http://h:1/v1', api_key: '' }, ollama: { base_url: 'http://o' } });
  });
});
