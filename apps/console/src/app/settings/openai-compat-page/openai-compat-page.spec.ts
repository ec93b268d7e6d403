import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import type { OpenAiCompatSettings } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { OpenAiCompatPage } from './openai-compat-page';

const OFF: OpenAiCompatSettings = {
  enabled: false,
  default_model: null,
  tool_progress: false,
  map_user_to_chat: false,
  keys: [],
  api_token_accepted: false,
};
const KEY = { id: '0123456789abcdef', name: 'Open WebUI', prefix: 'cck_AbCdEf', created_at: '2026-07-26T12:00:00+08:00', last_used_at: null };

describe('OpenAiCompatPage', () => {
  let fixture: ComponentFixture<OpenAiCompatPage>;
  let http: HttpTestingController;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      fixture.detectChanges();
    }
  };
  const element = () => fixture.nativeElement as HTMLElement;
  const byTestId = <T extends HTMLElement>(id: string) => element().querySelector<T>(`[data-testid="${id}"]`);

  beforeEach(async () => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(OpenAiCompatPage);
    fixture.detectChanges();
    http.expectOne('/api/settings/openai-compat').flush(OFF);
    await settle();
  });

  afterEach(() => http.verify());

  it('Scenario: the console switches the endpoint on', async () => {
    expect(byTestId('openai-status')?.textContent?.trim()).toBe('Off');
    expect(byTestId('openai-keys')?.textContent).toContain('No keys yet');
    byTestId<HTMLInputElement>('openai-enabled')!.querySelector<HTMLButtonElement>('button')!.click();
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/settings/openai-compat');
    expect(put.request.body).toEqual({ enabled: true });
    put.flush({ ...OFF, enabled: true });
    await settle();
    expect(byTestId('openai-status')?.textContent?.trim()).toBe('On');
  });

  it('Scenario: the console shows a new key once and lists it without its secret', async () => {
    const input = byTestId<HTMLInputElement>('openai-key-name')!;
    input.value = 'Open WebUI';
    input.dispatchEvent(new Event('input'));
    await settle();
    byTestId<HTMLButtonElement>('openai-create-key')!.click();
    await settle();
    const post = http.expectOne('/api/settings/openai-compat/keys');
    expect(post.request.body).toEqual({ name: 'Open WebUI' });
    post.flush({ key: KEY, secret: 'cck_AbCdEfSecretSecretSecret' }, { status: 201, statusText: 'Created' });
    await settle();
    http.expectOne('/api/settings/openai-compat').flush({ ...OFF, keys: [KEY] });
    await settle();
    expect(byTestId('openai-secret')?.textContent?.trim()).toBe('cck_AbCdEfSecretSecretSecret');
    const rows = element().querySelectorAll('[data-testid="openai-key-row"]');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.textContent).toContain('Open WebUI');
    expect(rows[0]?.textContent).toContain('cck_AbCdEf…');
    expect(rows[0]?.textContent).not.toContain('Secret');
    byTestId<HTMLButtonElement>('openai-dismiss-key')!.click();
    await settle();
    expect(byTestId('openai-secret')).toBeNull();
  });
});
