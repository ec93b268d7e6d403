import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { PublicLlmSettings } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { BackgroundModelStore, parseSelectionKey, selectionKey } from './background-model-store';

const SETTINGS: PublicLlmSettings = {
  configured: true,
  openai_compatible: { base_url: 'https://api.example.com/v1', ready: true, api_key_configured: true },
  ollama: { base_url: '', ready: false },
  background: null,
};

describe('BackgroundModelStore', () => {
  let store: BackgroundModelStore;
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting(), BackgroundModelStore],
    });
    store = TestBed.inject(BackgroundModelStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  it('Scenario: selection keys round-trip', () => {
    expect(selectionKey({ provider: 'ollama', model: 'llama3:8b' })).toBe('ollama:llama3:8b');
    expect(parseSelectionKey('ollama:llama3:8b')).toEqual({ provider: 'ollama', model: 'llama3:8b' });
    expect(parseSelectionKey('')).toBeNull();
  });

  it('Scenario: choosing a model saves it with the current connections (the stored key is kept)', async () => {
    const loading = store.load();
    http.expectOne('/api/settings/llm').flush(SETTINGS);
    await settle();
    http.expectOne('/api/settings/llm/models').flush({
      models: [{ provider: 'openai_compatible', id: 'm1' }],
      providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: false, error: null } },
    });
    await loading;
    expect(store.options().map((o) => o.key)).toEqual(['openai_compatible:m1']);
    expect(store.selected()).toBe('');

    const choosing = store.choose('openai_compatible:m1');
    http.expectOne({ method: 'GET', url: '/api/settings/llm' }).flush(SETTINGS);
    await settle();
    const put = http.expectOne({ method: 'PUT', url: '/api/settings/llm' });
    expect(put.request.body).toEqual({
      openai_compatible: { base_url: 'https://api.example.com/v1' },
      ollama: { base_url: '' },
      background: { provider: 'openai_compatible', model: 'm1' },
    });
    put.flush({ ...SETTINGS, background: { provider: 'openai_compatible', model: 'm1' } });
    await choosing;
    expect(store.selected()).toBe('openai_compatible:m1');
    expect(store.message()).toEqual({ kind: 'success', text: 'Background model saved.' });
  });
});
