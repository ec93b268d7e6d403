import { Injectable, computed, inject, signal } from '@angular/core';
import type { PublicLlmSettings } from '@cashcode/contracts';

import { errorMessage } from '../core/api/api-error';
import { I18n } from '../core/i18n/i18n';
import { LlmSettingsApi } from './llm-settings-api';
import {
  FIELD_TABS,
  buildTestRequest,
  buildUpdateRequest,
  draftFromSettings,
  mapServerError,
  validateDraft,
  type FieldName,
  type LlmSettingsDraft,
  type ServerFieldErrors,
  type SettingsTab,
} from './llm-settings-form';

export interface StatusMessage {
  kind: 'success' | 'error';
  text: string;
  /** Test connection: the model ids the server found */
  models?: string[];
}

/** State of the LLM settings view: the saved settings, the draft, validation and the last action's outcome. */
@Injectable()
export class LlmSettingsStore {
  private readonly api = inject(LlmSettingsApi);
  private readonly i18n = inject(I18n);

  private readonly saved = signal<PublicLlmSettings | null>(null);
  private readonly draftState = signal<LlmSettingsDraft>(draftFromSettings(null));
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly submitted = signal(false);
  private readonly serverErrors = signal<ServerFieldErrors>({});
  private readonly busy = signal<'idle' | 'saving' | 'testing'>('idle');
  private readonly outcome = signal<StatusMessage | null>(null);

  readonly settings = this.saved.asReadonly();
  readonly draft = this.draftState.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly action = this.busy.asReadonly();
  readonly message = this.outcome.asReadonly();
  readonly configured = computed(() => this.saved()?.configured ?? false);

  private readonly clientErrors = computed(() => (this.submitted() ? validateDraft(this.draftState()) : {}));

  /** The message to show at a field: the API's, else the client-side one. */
  fieldError(field: FieldName): string | null {
    const server = this.serverErrors()[field];
    if (server) return server;
    const client = this.clientErrors()[field];
    return client ? this.i18n.t(client) : null;
  }

  async load(): Promise<void> {
    this.loadingFlag.set(true);
    this.loadFailure.set(null);
    try {
      const settings = await this.api.get();
      this.saved.set(settings);
      this.draftState.set(draftFromSettings(settings, this.draftState().tab));
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  setTab(tab: SettingsTab): void {
    this.draftState.update((draft) => ({ ...draft, tab }));
    this.outcome.set(null);
  }

  update(field: FieldName, value: string): void {
    this.draftState.update((draft) => ({ ...draft, [field]: value }));
    // a key refused for the base URL's origin is about that URL too: editing either clears the message
    const stale: FieldName[] =
      field === 'apiBaseUrl' ? ['apiBaseUrl', 'apiKey'] : field === 'anthropicBaseUrl' ? ['anthropicBaseUrl', 'anthropicKey'] : [field];
    this.serverErrors.update((errors) => {
      if (stale.every((name) => errors[name] === undefined)) return errors;
      const next = { ...errors };
      for (const name of stale) delete next[name];
      return next;
    });
  }

  setClearKey(clear: boolean, provider: 'openai_compatible' | 'anthropic' = 'openai_compatible'): void {
    if (provider === 'anthropic') {
      this.draftState.update((draft) => ({ ...draft, clearAnthropicKey: clear, anthropicKey: clear ? '' : draft.anthropicKey }));
      this.serverErrors.update((errors) => ({ ...errors, anthropicKey: undefined }));
      return;
    }
    this.draftState.update((draft) => ({ ...draft, clearApiKey: clear, apiKey: clear ? '' : draft.apiKey }));
    this.serverErrors.update((errors) => ({ ...errors, apiKey: undefined }));
  }

  async test(): Promise<void> {
    if (!this.validate()) return;
    this.busy.set('testing');
    this.outcome.set(null);
    try {
      const response = await this.api.test(buildTestRequest(this.draftState()));
      this.outcome.set({ kind: 'success', text: this.i18n.t('settings.testSucceeded', { count: response.model_count }), models: response.models ?? [] });
    } catch (error) {
      this.applyServerError(error);
    } finally {
      this.busy.set('idle');
    }
  }

  async save(): Promise<boolean> {
    if (!this.validate()) return false;
    this.busy.set('saving');
    this.outcome.set(null);
    try {
      const settings = await this.api.save(buildUpdateRequest(this.draftState()));
      this.saved.set(settings);
      this.draftState.set(draftFromSettings(settings, this.draftState().tab));
      this.submitted.set(false);
      this.outcome.set({ kind: 'success', text: this.i18n.t('settings.saved') });
      return true;
    } catch (error) {
      this.applyServerError(error);
      return false;
    } finally {
      this.busy.set('idle');
    }
  }

  private validate(): boolean {
    this.submitted.set(true);
    this.serverErrors.set({});
    const errors = validateDraft(this.draftState());
    if (Object.keys(errors).length === 0) return true;
    this.outcome.set(null);
    return false;
  }

  private applyServerError(error: unknown): void {
    const mapped = mapServerError(error);
    this.serverErrors.set(mapped.fields);
    const fields = Object.keys(mapped.fields) as FieldName[];
    const visible = fields.filter((field) => FIELD_TABS[field] === this.draftState().tab);
    if (fields.length > 0 && visible.length === 0) this.setTab(FIELD_TABS[fields[0]]);
    this.outcome.set(mapped.general ? { kind: 'error', text: mapped.general } : null);
  }
}
