/**
 * The model ids `/v1` offers (openspec openai-compat "Requirement: Models"): `cashcode` runs the settings' default
 * model (else the model the last turn used, else the background model, else the first discovered one);
 * `cashcode:<provider>/<model>` a discovered model of a ready provider. Discovery is cached for a short while.
 */
import { Inject, Injectable } from '@nestjs/common';
import { LLM_PROVIDERS, type LlmProvider, type LlmSelection } from '@cashcode/contracts';
import { LLM_CLIENT_PROVIDER, type LlmClientProvider } from '../llm-settings/llm-provider';
import { LlmSettingsService } from '../llm-settings/llm-settings.service';
import { notConfigured, notFound } from './openai-compat-errors';
import { OpenAiCompatSettingsService } from './openai-compat-settings.service';

export const CASHCODE_MODEL_ID = 'cashcode';
const MODEL_ID_PATTERN = /^cashcode:([a-z_]+)\/(.+)$/;
/** how long a discovered model list is trusted when checking a model id */
const DISCOVERY_TTL_MS = 30_000;
const SERVER_START = Math.floor(Date.now() / 1000);

export interface ModelEntry {
  id: string;
  created: number;
}

function modelId(selection: LlmSelection): string {
  return `cashcode:${selection.provider}/${selection.model}`;
}

@Injectable()
export class OpenAiCompatModels {
  private discovered: { at: number; ids: Set<string> } | null = null;

  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    private readonly llmSettings: LlmSettingsService,
    private readonly settings: OpenAiCompatSettingsService,
  ) {}

  /** `cashcode` and every discovered model of the ready providers. */
  async listModels(): Promise<ModelEntry[]> {
    const listed = await this.llmSettings.listModels();
    const ids = listed.models.map((entry) => modelId({ provider: entry.provider, model: entry.id }));
    this.discovered = { at: Date.now(), ids: new Set(ids) };
    return [CASHCODE_MODEL_ID, ...ids].map((id) => ({ id, created: SERVER_START }));
  }

  /** The model a model id runs; 404 `model_not_found` for an id that names no discovered model. */
  async resolveModel(id: string): Promise<LlmSelection> {
    if (id === CASHCODE_MODEL_ID) {
      const chosen = this.settings.defaultModel ?? this.llm.lastSelection() ?? this.llm.backgroundSelection();
      if (chosen) return chosen;
      const first = (await this.discoveredIds(true))[0];
      const match = first === undefined ? null : MODEL_ID_PATTERN.exec(first);
      if (!match) {
        throw notConfigured(
          'No chat model is chosen for the model id cashcode and none was discovered: configure a provider in Settings > LLM settings, or choose a model in Settings > OpenAI-compatible API.',
        );
      }
      return { provider: match[1] as LlmProvider, model: match[2] as string };
    }
    const match = MODEL_ID_PATTERN.exec(id);
    if (!match || !(LLM_PROVIDERS as readonly string[]).includes(match[1] as string)) throw notFound(id);
    const selection: LlmSelection = { provider: match[1] as LlmProvider, model: match[2] as string };
    if (!this.llm.isReady(selection.provider)) throw notFound(id);
    if ((await this.discoveredIds(false)).includes(id)) return selection;
    // a model added since the last listing: look again once
    if ((await this.discoveredIds(true)).includes(id)) return selection;
    throw notFound(id);
  }

  private async discoveredIds(refresh: boolean): Promise<string[]> {
    if (refresh || !this.discovered || Date.now() - this.discovered.at > DISCOVERY_TTL_MS) {
      await this.listModels();
    }
    return [...(this.discovered?.ids ?? [])];
  }
}
