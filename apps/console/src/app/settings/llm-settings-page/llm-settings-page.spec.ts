import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import type { PublicLlmSettings } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { LlmSettingsPage } from './llm-settings-page';

const SAVED: PublicLlmSettings = {
  configured: true,
  openai_compatible: { base_url: 'https://api.example.com/v1', ready: true, api_key_configured: true },
  ollama: { base_url: '', ready: false },
  background: null,
};
const SERVER_MOVED = 'The base URL moved to another origin; enter the API key for it again (or clear the stored key)';

describe('LlmSettingsPage', () => {
  let fixture: ComponentFixture<LlmSettingsPage>;
  let http: HttpTestingController;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      fixture.detectChanges();
    }
  };
  const element = () => fixture.nativeElement as HTMLElement;
  const byTestId = <T extends HTMLElement>(id: string) => element().querySelector<T>(`[data-testid="${id}"]`);
  /** answers what the background model picker asks for (it is shown once a provider is configured) */
  const flushPicker = () => {
    for (const request of http.match('/api/settings/llm')) request.flush(SAVED);
    for (const request of http.match('/api/settings/llm/models')) {
      request.flush({ models: [], providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: false, error: null } } });
    }
  };
  const typeBaseUrl = async (value: string) => {
    const input = byTestId<HTMLInputElement>('openai-base-url')!;
    input.value = value;
    input.dispatchEvent(new Event('input'));
    await settle();
  };

  beforeEach(async () => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(LlmSettingsPage);
    fixture.detectChanges();
    http.expectOne('/api/settings/llm').flush(SAVED);
    await settle();
    flushPicker();
    await settle();
  });

  afterEach(() => {
    flushPicker();
    http.verify();
  });

  it('Scenario: a base URL on another origin asks for the key again before anything is sent', async () => {
    expect(byTestId<HTMLInputElement>('openai-api-key')!.placeholder).toBe('Leave blank to keep the current key');
    await typeBaseUrl('https://other.example.com/v1');
    expect(byTestId<HTMLInputElement>('openai-api-key')!.placeholder).toBe('');
    byTestId<HTMLButtonElement>('save-settings')!.click();
    await settle();
    expect(byTestId('openai-api-key-error')?.textContent?.trim()).toBe(
      'The base URL moved to another origin; enter the API key for it again',
    );
    http.expectNone('/api/settings/llm');
  });

  it("Scenario: the server's 422 on openai_compatible.api_key is shown at the API key field", async () => {
    await typeBaseUrl('https://api.example.com/v2');
    byTestId<HTMLButtonElement>('test-connection')!.click();
    await settle();
    const probe = http.expectOne('/api/settings/llm/test');
    expect(probe.request.body).toEqual({
      openai_compatible: { base_url: 'https://api.example.com/v2', clear_api_key: false },
      ollama: { base_url: '' },
      anthropic: { base_url: '', clear_api_key: false },
      provider: 'openai_compatible',
    });
    probe.flush(
      {
        type: 'urn:cashcode:problem:validation-error',
        title: 'Unprocessable Entity',
        status: 422,
        detail: SERVER_MOVED,
        errors: [{ field: 'openai_compatible.api_key', message: SERVER_MOVED }],
      },
      { status: 422, statusText: 'Unprocessable Entity', headers: { 'content-type': 'application/problem+json' } },
    );
    await settle();
    expect(byTestId('openai-api-key-error')?.textContent?.trim()).toBe(SERVER_MOVED);
    expect(byTestId('settings-message')).toBeNull();
  });

  it('Scenario: Test connection lists the models the server found', async () => {
    byTestId<HTMLButtonElement>('test-connection')!.click();
    await settle();
    http.expectOne('/api/settings/llm/test').flush({
      success: true,
      provider: 'openai_compatible',
      model_count: 2,
      message: 'Connected: found 2 models',
      models: ['local-a', 'local-b'],
    });
    await settle();
    expect(byTestId('settings-message')?.textContent).toContain('Connected: found 2 models');
    const found = Array.from(byTestId('found-models')?.querySelectorAll('li') ?? []).map((item) => item.textContent?.trim());
    expect(found).toEqual(['local-a', 'local-b']);
  });
});
