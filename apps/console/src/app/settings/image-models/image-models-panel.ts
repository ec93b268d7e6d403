import { HttpClient } from '@angular/common/http';
import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { MatSlideToggleModule, type MatSlideToggleChange } from '@angular/material/slide-toggle';
import {
  API_PATHS,
  type ImageModelsResponse,
  type LlmModelEntry,
  type LlmModelsResponse,
  type PublicLlmSettings,
  type SetImageModelRequest,
  type SetThinkingModelRequest,
  type ThinkingModelsResponse,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

import { errorMessage } from '../../core/api/api-error';
import { I18n, type MessageKey } from '../../core/i18n/i18n';

const PROVIDER_LABELS: Record<LlmModelEntry['provider'], MessageKey> = {
  openai_compatible: 'provider.openai_compatible',
  ollama: 'provider.ollama',
  anthropic: 'provider.anthropic',
};

/**
 * "Takes images" per model (openspec console "Requirement: Image models in the LLM settings"): the saved providers'
 * models with a toggle each; a model whose provider listing says it takes images is shown on and cannot be changed.
 * A toggle is saved at once with `PUT /api/settings/llm/image-models`. Anthropic models have a second toggle,
 * "Extended thinking" (`PUT /api/settings/llm/thinking-models`).
 */
@Component({
  selector: 'cc-image-models-panel',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatSlideToggleModule],
  template: `
    <section class="cc-image-models" [attr.aria-labelledby]="'cc-image-models-title'" data-testid="image-models">
      <h2 id="cc-image-models-title">{{ i18n.t('settings.imageModels.title') }}</h2>
      <p class="cc-image-models-hint">{{ i18n.t('settings.imageModels.hint') }}</p>
      @if (error(); as failure) {
        <p class="cc-image-models-error" role="alert">{{ failure }}</p>
      }
      @if (models().length === 0 && !error()) {
        <p class="cc-image-models-hint">{{ i18n.t('settings.imageModels.none') }}</p>
      }
      <ul class="cc-image-models-list">
        @for (model of models(); track model.provider + ':' + model.id) {
          <li>
            <mat-slide-toggle
              [checked]="model.accepts_images === true"
              [disabled]="model.images_reported === true || saving() === model.provider + ':' + model.id"
              (change)="onToggle(model, $event)"
              [attr.data-model]="model.id"
              data-testid="image-model-toggle"
            >
              {{ model.id }} · {{ i18n.t(providerLabel(model)) }}
              @if (model.images_reported) {
                <span class="cc-image-models-reported">({{ i18n.t('settings.imageModels.reported') }})</span>
              }
            </mat-slide-toggle>
            @if (model.provider === 'anthropic') {
              <mat-slide-toggle
                class="cc-thinking-toggle"
                [checked]="thinking().has(model.id)"
                [disabled]="saving() === 'thinking:' + model.id"
                (change)="onThinking(model, $event)"
                [attr.data-model]="model.id"
                data-testid="thinking-model-toggle"
              >
                {{ i18n.t('settings.thinkingModels.toggle') }}
              </mat-slide-toggle>
            }
          </li>
        }
      </ul>
    </section>
  `,
  styles: `
    .cc-image-models { margin-top: 24px; }
    .cc-image-models h2 { font-size: 16px; margin: 0 0 4px; }
    .cc-image-models-hint { margin: 0 0 8px; font-size: 13px; opacity: 0.8; }
    .cc-image-models-error { color: var(--mat-sys-error); font-size: 13px; }
    .cc-image-models-list { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
    .cc-image-models-reported { opacity: 0.7; }
    .cc-thinking-toggle { margin-left: 24px; }
  `,
})
export class ImageModelsPanel {
  protected readonly i18n = inject(I18n);
  private readonly http = inject(HttpClient);
  protected readonly models = signal<readonly LlmModelEntry[]>([]);
  protected readonly error = signal<string | null>(null);
  protected readonly saving = signal<string | null>(null);
  /** Anthropic models with extended thinking on */
  protected readonly thinking = signal<ReadonlySet<string>>(new Set());

  constructor() {
    void this.load();
  }

  protected providerLabel(model: LlmModelEntry): MessageKey {
    return PROVIDER_LABELS[model.provider];
  }

  async load(): Promise<void> {
    try {
      const listing = await firstValueFrom(this.http.get<LlmModelsResponse>(API_PATHS.llmModels));
      this.models.set(listing.models);
      // the thinking toggles of Anthropic models show the saved per-model setting
      if (listing.models.some((entry) => entry.provider === 'anthropic')) {
        const settings = await firstValueFrom(this.http.get<PublicLlmSettings>(API_PATHS.llmSettings));
        this.thinking.set(new Set((settings.thinking_models ?? []).filter((entry) => entry.provider === 'anthropic').map((entry) => entry.model)));
      }
      this.error.set(null);
    } catch (error) {
      this.error.set(errorMessage(error));
    }
  }

  protected async onThinking(model: LlmModelEntry, change: MatSlideToggleChange): Promise<void> {
    const request: SetThinkingModelRequest = { provider: model.provider, model: model.id, thinking: change.checked };
    this.saving.set(`thinking:${model.id}`);
    try {
      const answer = await firstValueFrom(this.http.put<ThinkingModelsResponse>(API_PATHS.llmThinkingModels, request));
      this.thinking.set(new Set(answer.thinking_models.filter((entry) => entry.provider === 'anthropic').map((entry) => entry.model)));
      this.error.set(null);
    } catch (error) {
      change.source.checked = !change.checked;
      this.error.set(errorMessage(error));
    } finally {
      this.saving.set(null);
    }
  }

  protected async onToggle(model: LlmModelEntry, change: MatSlideToggleChange): Promise<void> {
    const request: SetImageModelRequest = { provider: model.provider, model: model.id, accepts_images: change.checked };
    this.saving.set(`${model.provider}:${model.id}`);
    try {
      await firstValueFrom(this.http.put<ImageModelsResponse>(API_PATHS.llmImageModels, request));
      this.models.update((models) =>
        models.map((entry) => {
          if (entry.provider !== model.provider || entry.id !== model.id) return entry;
          const next: LlmModelEntry = { ...entry };
          if (change.checked) next.accepts_images = true;
          else delete next.accepts_images;
          return next;
        }),
      );
      this.error.set(null);
    } catch (error) {
      change.source.checked = !change.checked;
      this.error.set(errorMessage(error));
    } finally {
      this.saving.set(null);
    }
  }
}
