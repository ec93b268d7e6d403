import { Logger } from '@nestjs/common';
import { mkdtemp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../config/app-config';
import { redactSecrets } from '../common/redact';
import { LlmNotConfiguredError } from './llm-provider';
import { LlmSettingsError } from './llm-settings.errors';
import { LlmSettingsStore } from './llm-settings-store';
import { LlmSettingsService } from './llm-settings.service';
import type { LlmSettingsUpdate } from './llm-settings.validation';

/** A real store whose write step fails like a full disk would. */
class FailingWriteStore extends LlmSettingsStore {
  failWrites = false;
  protected override async writeFile(content: string): Promise<void> {
    if (this.failWrites) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    await super.writeFile(content);
  }
}

const OPENAI: LlmSettingsUpdate = {
  openai_compatible: { base_url: 'https://api.example.com/v1', api_key: 'sk-first-key-123' },
  ollama: {},
};

describe(LlmSettingsService.name, () => {
  let root: string;
  let config: AppConfig;
  let store: FailingWriteStore;

  async function start(env: Record<string, string> = {}): Promise<LlmSettingsService> {
    config = loadConfig({ CASHCODE_CONFIG_DIR: join(root, 'config'), ...env }, root);
    store = new FailingWriteStore(config);
    const service = new LlmSettingsService(config, store);
    await service.onModuleInit();
    return service;
  }

  async function settingsError(promise: Promise<unknown> | (() => unknown)): Promise<LlmSettingsError> {
    try {
      await (typeof promise === 'function' ? promise() : promise);
    } catch (error) {
      if (error instanceof LlmSettingsError) return error;
      throw error;
    }
    throw new Error('expected an LlmSettingsError');
  }

  beforeAll(() => Logger.overrideLogger(false));

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'cc-llm-service-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe('startup', () => {
    it('Scenario: without a file and without DEEPSEEK_API_KEY nothing is configured', async () => {
      const service = await start();
      expect(service.getPublicSettings().configured).toBe(false);
      expect(() => service.acquire('openai_compatible')).toThrow(LlmNotConfiguredError);
    });

    it('Scenario: DEEPSEEK_API_KEY is migrated once into the settings file', async () => {
      const service = await start({ DEEPSEEK_API_KEY: ' sk-legacy-key-1 ', DEEPSEEK_MODEL: 'deepseek-chat' });
      expect(service.getPublicSettings()).toEqual({
        configured: true,
        openai_compatible: { base_url: 'https://api.deepseek.com', ready: true, api_key_configured: true },
        ollama: { base_url: '', ready: false },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
      const saved = JSON.parse(await readFile(store.filePath, 'utf8')) as unknown;
      expect(saved).toEqual({
        version: 2,
        openai_compatible: {
          base_url: 'https://api.deepseek.com',
          api_key: 'sk-legacy-key-1',
          api_key_origin: 'https://api.deepseek.com',
        },
        ollama: { base_url: '' },
      });
      expect((await stat(store.filePath)).mode & 0o777).toBe(0o600);
      const lease = service.acquire('openai_compatible');
      expect(lease.client.baseURL).toBe('https://api.deepseek.com');
      lease.release();
    });

    it('Scenario: DEEPSEEK_API_BASE is used for the migration', async () => {
      const service = await start({ DEEPSEEK_API_KEY: 'sk-legacy', DEEPSEEK_API_BASE: 'https://proxy.example.com/v1/' });
      expect(service.getPublicSettings().openai_compatible.base_url).toBe('https://proxy.example.com/v1');
    });

    it('Scenario: once the file exists the legacy variables are never read again', async () => {
      const first = await start();
      await first.updateSettings({ openai_compatible: {}, ollama: { base_url: 'http://127.0.0.1:11434' } });
      const second = await start({ DEEPSEEK_API_KEY: 'sk-legacy', DEEPSEEK_API_BASE: 'https://legacy.example.com' });
      expect(second.getPublicSettings()).toEqual({
        configured: true,
        openai_compatible: { base_url: '', ready: false, api_key_configured: false },
        ollama: { base_url: 'http://127.0.0.1:11434', ready: true },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
    });

    it('Scenario: an unreadable file makes GET and /models fail until a successful PUT', async () => {
      await mkdir(join(root, 'config', 'settings'), { recursive: true });
      await writeFile(join(root, 'config', 'settings', 'llm.json'), '{"version": 9}');
      const service = await start({ DEEPSEEK_API_KEY: 'sk-legacy' });
      const error = await settingsError(() => service.getPublicSettings());
      expect(error.code).toBe('settings_unreadable');
      expect(error.message).toBe('the LLM settings file is invalid or unreadable');
      expect((await settingsError(service.listModels())).code).toBe('settings_unreadable');
      expect(() => service.acquire('openai_compatible')).toThrow(LlmNotConfiguredError);
      await service.updateSettings(OPENAI);
      expect(service.getPublicSettings().openai_compatible.ready).toBe(true);
    });
  });

  describe('updateSettings', () => {
    it('Scenario: a PUT installs new clients and the file survives a restart', async () => {
      const service = await start();
      const result = await service.updateSettings(OPENAI);
      expect(result).toEqual({
        configured: true,
        openai_compatible: { base_url: 'https://api.example.com/v1', ready: true, api_key_configured: true },
        ollama: { base_url: '', ready: false },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
      expect(JSON.stringify(result)).not.toContain('sk-first-key-123');
      const restarted = await start();
      expect(restarted.getPublicSettings()).toEqual(result);
      const lease = restarted.acquire('openai_compatible');
      expect(lease.client.apiKey).toBe('sk-first-key-123');
      lease.release();
    });

    it('Scenario: the stored key is kept when the next PUT omits it', async () => {
      const service = await start();
      await service.updateSettings(OPENAI);
      await service.updateSettings({ openai_compatible: { base_url: 'https://api.example.com/v2' }, ollama: {} });
      const lease = service.acquire('openai_compatible');
      expect(lease.client.apiKey).toBe('sk-first-key-123');
      expect(lease.client.baseURL).toBe('https://api.example.com/v2');
      lease.release();
    });

    it('Scenario: a PUT that moves the base URL to another origin without a key is refused and changes nothing', async () => {
      const service = await start();
      const before = await service.updateSettings(OPENAI);
      const fileBefore = await readFile(store.filePath, 'utf8');
      const generationBefore = service.currentGeneration;
      const error = await settingsError(
        service.updateSettings({ openai_compatible: { base_url: 'https://other.example.com' }, ollama: {} }),
      );
      expect(error.code).toBe('invalid_settings');
      expect(error.fieldErrors.map((e) => e.field)).toEqual(['openai_compatible.api_key']);
      expect(await readFile(store.filePath, 'utf8')).toBe(fileBefore);
      expect(service.getPublicSettings()).toEqual(before);
      expect(service.currentGeneration).toBe(generationBefore);
    });

    it('Scenario: a settings file whose key is bound to another origin installs a client without the key', async () => {
      await mkdir(join(root, 'config', 'settings'), { recursive: true });
      await writeFile(
        join(root, 'config', 'settings', 'llm.json'),
        JSON.stringify({
          version: 2,
          openai_compatible: { base_url: 'https://b.example.com/v1', api_key: 'sk-a', api_key_origin: 'https://a.example.com' },
          ollama: { base_url: '' },
        }),
      );
      const service = await start();
      expect(service.getPublicSettings().openai_compatible).toEqual({
        base_url: 'https://b.example.com/v1',
        ready: true,
        api_key_configured: false,
      });
      const lease = service.acquire('openai_compatible');
      expect(lease.client.apiKey).not.toBe('sk-a');
      lease.release();
    });

    it('Scenario: an I/O failure answers save_failed and leaves the file, runtime and public state unchanged', async () => {
      const service = await start();
      const before = await service.updateSettings(OPENAI);
      const fileBefore = await readFile(store.filePath, 'utf8');
      const generationBefore = service.currentGeneration;
      store.failWrites = true;
      const error = await settingsError(
        service.updateSettings({ openai_compatible: { base_url: 'https://new.example.com', api_key: 'sk-new-key-456' }, ollama: {} }),
      );
      expect(error.code).toBe('settings_save_failed');
      expect(error.message).toBe('unable to save the LLM settings file');
      expect(await readFile(store.filePath, 'utf8')).toBe(fileBefore);
      expect(service.getPublicSettings()).toEqual(before);
      expect(service.currentGeneration).toBe(generationBefore);
      const lease = service.acquire('openai_compatible');
      expect(lease.client.baseURL).toBe('https://api.example.com/v1');
      lease.release();
    });

    it('Scenario: saving with no ready provider is rejected and nothing changes', async () => {
      const service = await start();
      const error = await settingsError(
        service.updateSettings({ openai_compatible: { base_url: '' }, ollama: {} }),
      );
      expect(error.code).toBe('no_provider_ready');
      await expect(stat(store.filePath)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('Scenario: the API key is registered for log redaction', async () => {
      const service = await start();
      await service.updateSettings({ openai_compatible: { base_url: 'https://a.example.com', api_key: 'plainsecretvalue' }, ollama: {} });
      expect(redactSecrets('token plainsecretvalue here')).toBe('token [redacted] here');
    });
  });

  describe('generations and leases', () => {
    it('Scenario: a lease keeps its client across a PUT; the old generation closes with its last lease', async () => {
      const service = await start();
      await service.updateSettings(OPENAI);
      const oldLease = service.acquire('openai_compatible');
      const oldGeneration = oldLease.generation;
      await service.updateSettings({ openai_compatible: { base_url: 'https://second.example.com', api_key: 'sk-second' }, ollama: {} });
      const newLease = service.acquire('openai_compatible');
      expect(newLease.generation).toBeGreaterThan(oldGeneration);
      expect(oldLease.client.baseURL).toBe('https://api.example.com/v1');
      expect(newLease.client.baseURL).toBe('https://second.example.com');
      expect(newLease.client.apiKey).toBe('sk-second');
      expect(service.openGenerations()).toEqual([oldGeneration, newLease.generation]);
      oldLease.release();
      oldLease.release(); // idempotent
      expect(service.openGenerations()).toEqual([newLease.generation]);
      newLease.release();
    });

    it('Scenario: Ollama clients use <base>/v1 and the ollama-local key', async () => {
      const service = await start();
      await service.updateSettings({ openai_compatible: {}, ollama: { base_url: 'http://127.0.0.1:11434/v1/' } });
      const lease = service.acquire('ollama');
      expect(lease.client.baseURL).toBe('http://127.0.0.1:11434/v1');
      expect(lease.client.apiKey).toBe('ollama-local');
      expect(lease.client.maxRetries).toBe(0);
      expect(lease.client.timeout).toBe(config.llmTimeoutMs);
      lease.release();
      expect(() => service.acquire('openai_compatible')).toThrow(
        'LLM is not configured (openai_compatible): open Settings > LLM settings to set up a connection.',
      );
    });

    it('Scenario: the last selection is remembered and cleared when its provider disappears', async () => {
      const service = await start();
      await service.updateSettings({ openai_compatible: {}, ollama: { base_url: 'http://127.0.0.1:11434' } });
      service.rememberSelection({ provider: 'ollama', model: 'llama3' });
      expect(service.lastSelection()).toEqual({ provider: 'ollama', model: 'llama3' });
      await service.updateSettings({ openai_compatible: {}, ollama: { base_url: 'http://127.0.0.1:11435' } });
      expect(service.lastSelection()).toEqual({ provider: 'ollama', model: 'llama3' });
      await service.updateSettings(OPENAI);
      expect(service.lastSelection()).toBeNull();
    });

    it('Scenario: concurrent PUTs apply one after the other', async () => {
      const service = await start();
      const results = await Promise.all([
        service.updateSettings(OPENAI),
        service.updateSettings({ openai_compatible: { base_url: 'https://api.example.com/v2' }, ollama: {} }),
      ]);
      // the second kept the key the first one stored
      expect(results[1].openai_compatible).toEqual({ base_url: 'https://api.example.com/v2', ready: true, api_key_configured: true });
      const saved = JSON.parse(await readFile(store.filePath, 'utf8')) as { openai_compatible: { api_key: string } };
      expect(saved.openai_compatible.api_key).toBe('sk-first-key-123');
    });
  });
});
