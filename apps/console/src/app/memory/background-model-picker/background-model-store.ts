import { Injectable, computed, inject, signal } from '@angular/core';
import type { LlmModelEntry, LlmSelection, PublicLlmSettings } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { MemoryApi } from '../memory-api';
import type { StatusMessage } from '../memory-store';
import { I18n } from '../../core/i18n/i18n';

/** `provider:model` (the select's value); '' means "no background model". */
export function selectionKey(selection: LlmSelection | null | undefined): string {
  return selection ? `${selection.provider}:${selection.model}` : '';
}

export function parseSelectionKey(key: string): LlmSelection | null {
  const colon = key.indexOf(':');
  if (key === '' || colon === -1) return null;
  const provider = key.slice(0, colon);
  if (provider !== 'openai_compatible' && provider !== 'ollama' && provider !== 'anthropic') return null;
  return { provider, model: key.slice(colon + 1) };
}

/** The background model choice (used by Dream) in the LLM settings. */
@Injectable()
export class BackgroundModelStore {
  private readonly api = inject(MemoryApi);
  private readonly i18n = inject(I18n);

  private readonly settingsState = signal<PublicLlmSettings | null>(null);
  private readonly modelsState = signal<LlmModelEntry[]>([]);
  private readonly busy = signal<'loading' | 'idle' | 'saving'>('loading');
  private readonly outcome = signal<StatusMessage | null>(null);

  readonly settings = this.settingsState.asReadonly();
  readonly action = this.busy.asReadonly();
  readonly message = this.outcome.asReadonly();
  readonly configured = computed(() => this.settingsState()?.configured ?? false);
  readonly selected = computed(() => selectionKey(this.settingsState()?.background));
  /** every discovered model, plus the saved choice when discovery no longer lists it */
  readonly options = computed(() => {
    const models = this.modelsState().map((entry) => ({ provider: entry.provider, model: entry.id }));
    const saved = this.settingsState()?.background;
    if (saved && !models.some((m) => selectionKey(m) === selectionKey(saved))) models.unshift(saved);
    return models.map((selection) => ({ key: selectionKey(selection), selection }));
  });

  async load(): Promise<void> {
    this.busy.set('loading');
    try {
      const settings = await this.api.llmSettings();
      this.settingsState.set(settings);
      if (settings.configured) this.modelsState.set((await this.api.models()).models);
    } catch (error) {
      this.outcome.set({ kind: 'error', text: errorMessage(error) });
    } finally {
      this.busy.set('idle');
    }
  }

  async choose(key: string): Promise<void> {
    if (!this.settingsState() || key === this.selected()) return;
    this.busy.set('saving');
    this.outcome.set(null);
    try {
      // send back the connections as they are now (they may have been saved since this view loaded)
      const current = await this.api.llmSettings();
      this.settingsState.set(await this.api.saveBackgroundModel(current, parseSelectionKey(key)));
      this.outcome.set({ kind: 'success', text: this.i18n.t('memory.dream.backgroundSaved') });
    } catch (error) {
      this.outcome.set({ kind: 'error', text: this.i18n.t('memory.dream.backgroundFailed', { detail: errorMessage(error) }) });
    } finally {
      this.busy.set('idle');
    }
  }
}
