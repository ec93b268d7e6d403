import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  LLM_PROVIDERS,
  type LlmModelEntry,
  type LlmModelsResponse,
  type LlmProvider,
  type LlmProviderStatus,
  type ImageModelsResponse,
  type LlmSelection,
  type PublicLlmSettings,
  type SetImageModelRequest,
  type SetThinkingModelRequest,
  type TestLlmConnectionResponse,
  type ThinkingModelsResponse,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { registerSecretValue } from '../common/redact';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ClientGenerations } from './client-generations';
import type { LlmClientProvider, ProviderLease } from './llm-provider';
import { usableAnthropicKey } from './anthropic-settings';
import { LLM_SETTINGS_MESSAGES, LlmSettingsError } from './llm-settings.errors';
import { LlmSettingsStore } from './llm-settings-store';
import {
  EMPTY_LLM_SETTINGS,
  applySettingsUpdate,
  isProviderReady,
  readyProviders,
  usableApiKey,
  requireDraftProviderReady,
  requireBackgroundProviderReady,
  requireReadyProvider,
  toPublicSettings,
  type LlmSettingsUpdate,
  type StoredLlmSettings,
} from './llm-settings.validation';
import { legacySettings } from './legacy-settings';
import { discoverModelCatalog } from './model-discovery';
import { createClientFor, type ProviderClient } from './provider-client';
import { classifyProviderError, probeErrorMessage, probeErrorReason } from './provider-errors';

export { LEGACY_DEEPSEEK_BASE_URL } from './legacy-settings';

export interface LlmTestConnectionInput extends LlmSettingsUpdate {
  provider: LlmProvider;
}

/**
 * Owns the LLM settings (file, validation, public view), the provider clients (one generation per saved settings,
 * leased to turns) and model discovery. Implements the LlmClientProvider port used by the agent, chat and memory.
 */
@Injectable()
export class LlmSettingsService implements LlmClientProvider, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(LlmSettingsService.name);
  private settings: StoredLlmSettings = EMPTY_LLM_SETTINGS;
  /** set when the file failed to load at startup; cleared by the next successful PUT */
  private loadFailure: string | null = null;
  private readonly clients = new ClientGenerations();
  private selection: LlmSelection | null = null;
  private writeChain: Promise<unknown> = Promise.resolve();
  /** per provider: the models its last listing (`/models`, `/test`) marked as taking images */
  private readonly reportedImageModels = new Map<LlmProvider, Set<string>>();
  private initialised: Promise<void> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: LlmSettingsStore,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.initialise();
  }

  onModuleDestroy(): void {
    this.clients.clear();
  }

  /** Loads the settings file (or migrates the legacy DEEPSEEK_* variables) and installs the clients. Idempotent. */
  initialise(): Promise<void> {
    this.initialised ??= this.loadAtStartup();
    return this.initialised;
  }

  // ---- REST operations -------------------------------------------------------------------------------------------

  getPublicSettings(): PublicLlmSettings {
    this.assertLoaded();
    return toPublicSettings(this.settings);
  }

  /**
   * PUT: validate (including the origin binding of a kept key), require a ready provider, write the file atomically,
   * install new clients. A refused update changes nothing.
   */
  updateSettings(update: LlmSettingsUpdate): Promise<PublicLlmSettings> {
    return this.exclusive(async () => {
      const next = applySettingsUpdate(this.settings, update);
      requireReadyProvider(next);
      requireBackgroundProviderReady(next);
      try {
        await this.store.save(next);
      } catch (error) {
        this.logger.warn(
          formatEvent('llm.settings.save_failed', { error_code: (error as NodeJS.ErrnoException).code ?? 'unknown' }),
        );
        throw new LlmSettingsError('settings_save_failed', LLM_SETTINGS_MESSAGES.saveFailed);
      }
      this.loadFailure = null;
      this.install(next);
      this.logger.log(formatEvent('llm.settings.saved', { providers: readyProviders(next).join(',') }));
      return toPublicSettings(next);
    });
  }

  /**
   * Probes a draft (the stored key is kept unless replaced or cleared, and only on its own origin); never persists;
   * the probe client is dropped.
   */
  async testConnection(input: LlmTestConnectionInput): Promise<TestLlmConnectionResponse> {
    const { provider } = input;
    const draft = applySettingsUpdate(this.settings, {
      openai_compatible: input.openai_compatible,
      ollama: input.ollama,
      anthropic: input.anthropic,
    });
    requireDraftProviderReady(draft, provider);
    // A probe client of its own: never installed, dropped when this call returns (the SDK clients hold no sockets).
    const probe = this.createClient(draft, provider);
    try {
      const { ids, imageModels } = await discoverModelCatalog(probe, this.config.llmDiscoveryTimeoutMs);
      this.reportedImageModels.set(provider, imageModels);
      this.logger.log(formatEvent('llm.settings.test_succeeded', { provider, model_count: ids.length }));
      return { success: true, provider, model_count: ids.length, message: `Connected: found ${ids.length} models`, models: ids };
    } catch (error) {
      this.logger.warn(
        formatEvent('llm.settings.test_failed', { provider, kind: classifyProviderError(error).kind }),
      );
      throw new LlmSettingsError('connection_failed', probeErrorMessage(error), [], { reason: probeErrorReason(error) });
    }
  }

  /** Lists the models of every saved provider concurrently; a failing provider contributes its `error` only. */
  async listModels(): Promise<LlmModelsResponse> {
    this.assertLoaded();
    const results = await Promise.all(
      LLM_PROVIDERS.map(async (provider): Promise<{ status: LlmProviderStatus; ids: string[] }> => {
        if (!this.clients.has(provider)) return { status: { ready: false, error: null }, ids: [] };
        const lease = this.acquire(provider);
        try {
          const { ids, imageModels } = await discoverModelCatalog(lease.client, this.config.llmDiscoveryTimeoutMs);
          this.reportedImageModels.set(provider, imageModels);
          return { status: { ready: true, error: null }, ids };
        } catch (error) {
          this.logger.warn(
            formatEvent('llm.models.list_failed', { provider, kind: classifyProviderError(error).kind }),
          );
          return { status: { ready: true, error: probeErrorMessage(error) }, ids: [] };
        } finally {
          lease.release();
        }
      }),
    );
    const models: LlmModelEntry[] = [];
    const providers = {} as Record<LlmProvider, LlmProviderStatus>;
    LLM_PROVIDERS.forEach((provider, index) => {
      const result = results[index];
      providers[provider] = result.status;
      for (const id of result.ids) {
        const reported = this.reportedImageModels.get(provider)?.has(id) === true;
        const entry: LlmModelEntry = { provider, id };
        // additive fields, present only when true
        if (this.acceptsImages(provider, id)) entry.accepts_images = true;
        if (reported) entry.images_reported = true;
        models.push(entry);
      }
    });
    const response: LlmModelsResponse = { models, providers };
    if (this.settings.lastUsed) response.last_used = { ...this.settings.lastUsed };
    return response;
  }

  /**
   * Marks one model as taking image input or not (the per-model setting for models whose provider listing does not
   * say so); saved with the settings atomically. Answers every marked model.
   */
  async setImageModel(request: SetImageModelRequest): Promise<ImageModelsResponse> {
    return { image_models: await this.saveModelMark('imageModels', request.provider, request.model, request.accepts_images) };
  }

  /** Turns extended thinking on or off for one model (a per-model setting); answers every model with thinking on. */
  async setThinkingModel(request: SetThinkingModelRequest): Promise<ThinkingModelsResponse> {
    return { thinking_models: await this.saveModelMark('thinkingModels', request.provider, request.model, request.thinking) };
  }

  /** Whether the user turned extended thinking on for the model. */
  thinkingEnabled(provider: LlmProvider, model: string): boolean {
    return (this.settings.thinkingModels ?? []).some((entry) => entry.provider === provider && entry.model === model);
  }

  /** Adds or removes one model of a per-model list and saves the settings; the installed clients stay. */
  private saveModelMark(
    list: 'imageModels' | 'thinkingModels',
    provider: LlmProvider,
    rawModel: string,
    marked: boolean,
  ): Promise<LlmSelection[]> {
    return this.exclusive(async () => {
      this.assertLoaded();
      const model = rawModel.trim();
      const others = (this.settings[list] ?? []).filter((entry) => !(entry.provider === provider && entry.model === model));
      const entries = marked ? [...others, { provider, model }] : others;
      const next: StoredLlmSettings = { ...this.settings, [list]: entries };
      if (entries.length === 0) delete next[list];
      try {
        await this.store.save(next);
      } catch (error) {
        this.logger.warn(
          formatEvent('llm.settings.save_failed', { error_code: (error as NodeJS.ErrnoException).code ?? 'unknown' }),
        );
        throw new LlmSettingsError('settings_save_failed', LLM_SETTINGS_MESSAGES.saveFailed);
      }
      this.settings = next;
      this.logger.log(formatEvent('llm.settings.model_mark_set', { list, provider, marked }));
      return entries.map((entry) => ({ ...entry }));
    });
  }

  /**
   * Whether a model takes image input: its provider's last listing said so, or the user marked it in the settings.
   * Default false.
   */
  acceptsImages(provider: LlmProvider, model: string): boolean {
    if (this.reportedImageModels.get(provider)?.has(model)) return true;
    return (this.settings.imageModels ?? []).some((entry) => entry.provider === provider && entry.model === model);
  }

  // ---- LlmClientProvider -----------------------------------------------------------------------------------------

  acquire(provider: LlmProvider): ProviderLease {
    return this.clients.acquire(provider);
  }

  rememberSelection(selection: LlmSelection): void {
    this.selection = { provider: selection.provider, model: selection.model };
    const stored = this.settings.lastUsed;
    if (!this.loadFailure && (stored?.provider !== selection.provider || stored.model !== selection.model)) {
      void this.saveLastUsed({ provider: selection.provider, model: selection.model });
    }
  }

  /** Saves the model a turn used with the settings (a fresh browser preselects it); a failed write is only logged. */
  private saveLastUsed(selection: LlmSelection): Promise<void> {
    return this.exclusive(async () => {
      const stored = this.settings.lastUsed;
      if (stored?.provider === selection.provider && stored.model === selection.model) return;
      const next: StoredLlmSettings = { ...this.settings, lastUsed: selection };
      try {
        await this.store.save(next);
        this.settings = next;
      } catch (error) {
        this.logger.warn(
          formatEvent('llm.settings.last_used_save_failed', { error_code: (error as NodeJS.ErrnoException).code ?? 'unknown' }),
        );
      }
    });
  }

  lastSelection(): LlmSelection | null {
    return this.selection ? { ...this.selection } : null;
  }

  backgroundSelection(): LlmSelection | null {
    return this.settings.background ? { ...this.settings.background } : null;
  }

  /** Whether the provider has an installed client (the turn's "LLM check"). */
  isReady(provider: LlmProvider): boolean {
    return this.clients.has(provider);
  }

  /** Generation ids whose clients are still open: the current one and retired ones still leased. */
  openGenerations(): number[] {
    return this.clients.openIds();
  }

  get currentGeneration(): number {
    return this.clients.currentId;
  }

  // ---- internals -------------------------------------------------------------------------------------------------

  private async loadAtStartup(): Promise<void> {
    const result = await this.store.load();
    switch (result.status) {
      case 'loaded':
        this.install(result.settings);
        this.logger.log(formatEvent('llm.settings.loaded', { providers: readyProviders(result.settings).join(',') }));
        return;
      case 'invalid':
        this.loadFailure = result.reason;
        this.logger.warn(formatEvent('llm.settings.load_failed', { reason: result.reason }));
        return;
      case 'missing':
        await this.migrateLegacySettings();
        return;
    }
  }

  /**
   * Legacy migration: only when llm.json does not exist and DEEPSEEK_API_KEY is set; DEEPSEEK_MODEL is ignored. The
   * key is bound to the origin of DEEPSEEK_API_BASE.
   */
  private async migrateLegacySettings(): Promise<void> {
    const settings = legacySettings(this.config.legacyDeepseekApiKey, this.config.legacyDeepseekApiBase);
    if (settings === null) return;
    if (settings === 'invalid') {
      this.logger.warn(formatEvent('llm.settings.migration_skipped', { reason: 'invalid DEEPSEEK_API_BASE or key' }));
      return;
    }
    try {
      await this.store.save(settings);
      this.logger.log(formatEvent('llm.settings.migrated', { source: 'DEEPSEEK_API_KEY' }));
    } catch (error) {
      this.logger.warn(
        formatEvent('llm.settings.migration_save_failed', {
          error_code: (error as NodeJS.ErrnoException).code ?? 'unknown',
        }),
      );
    }
    this.install(settings);
  }

  private assertLoaded(): void {
    if (this.loadFailure !== null) {
      throw new LlmSettingsError('settings_unreadable', LLM_SETTINGS_MESSAGES.unreadable);
    }
  }

  private createClient(settings: StoredLlmSettings, provider: LlmProvider): ProviderClient {
    // only keys bound to their base URL's origin (callers build clients for ready providers only)
    return createClientFor(provider, {
      openaiCompatible: { baseUrl: settings.openaiCompatible.baseUrl, apiKey: usableApiKey(settings.openaiCompatible) },
      ollamaBaseUrl: settings.ollama.baseUrl,
      anthropic: { baseUrl: settings.anthropic?.baseUrl ?? '', apiKey: settings.anthropic ? usableAnthropicKey(settings.anthropic) : '' },
      timeoutMs: this.config.llmTimeoutMs,
    });
  }

  /** Installs a new generation of clients; the previous one closes when its last lease is released. */
  private install(settings: StoredLlmSettings): void {
    if (settings.openaiCompatible.apiKey !== '') registerSecretValue(settings.openaiCompatible.apiKey);
    if (settings.anthropic && settings.anthropic.apiKey !== '') registerSecretValue(settings.anthropic.apiKey);
    const clients = new Map<LlmProvider, ProviderClient>();
    for (const provider of LLM_PROVIDERS) {
      if (isProviderReady(settings, provider)) clients.set(provider, this.createClient(settings, provider));
    }
    this.settings = settings;
    this.clients.install(clients);
    if (this.selection && !clients.has(this.selection.provider)) this.selection = null;
  }

  /** Serialises settings writes so that each update starts from the previous one's result. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.writeChain.then(task, task);
    this.writeChain = run.catch(() => undefined);
    return run;
  }
}
