import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { groupModels } from '../../chat/model-selection';
import { ImageModelsPanel } from './image-models-panel';

describe('ImageModelsPanel', () => {
  let fixture: ComponentFixture<ImageModelsPanel>;
  let http: HttpTestingController;
  const root = () => fixture.nativeElement as HTMLElement;
  const toggles = () => Array.from(root().querySelectorAll('[data-testid="image-model-toggle"]')) as HTMLElement[];
  const input = (toggle: HTMLElement) => toggle.querySelector('button[role="switch"], input') as HTMLButtonElement;

  beforeEach(async () => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(ImageModelsPanel);
    await fixture.whenStable();
    http.expectOne('/api/settings/llm/models').flush({
      models: [
        { provider: 'ollama', id: 'llava', accepts_images: true, images_reported: true },
        { provider: 'openai_compatible', id: 'local-vl' },
      ],
      providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: true, error: null } },
    });
    await Promise.resolve();
    fixture.detectChanges();
    await fixture.whenStable();
  });

  afterEach(() => http.verify());

  it('Scenario: The LLM settings toggle marks a model as taking images', async () => {
    const [reported, local] = toggles();
    expect(reported?.textContent).toContain('llava');
    expect(reported?.textContent).toContain('the provider says so');
    expect(input(reported!).disabled).toBe(true);
    expect(input(local!).getAttribute('aria-checked') ?? String((input(local!) as unknown as HTMLInputElement).checked)).not.toBe('true');
    input(local!).click();
    await fixture.whenStable();
    const request = http.expectOne('/api/settings/llm/image-models');
    expect(request.request.method).toBe('PUT');
    expect(request.request.body).toEqual({ provider: 'openai_compatible', model: 'local-vl', accepts_images: true });
    request.flush({ image_models: [{ provider: 'openai_compatible', model: 'local-vl' }] });
    await fixture.whenStable();
    expect(input(toggles()[1]!).getAttribute('aria-checked')).toBe('true');
  });

  it('Scenario: The model picker marks models that take images', () => {
    expect(
      groupModels([
        { provider: 'openai_compatible', id: 'a' },
        { provider: 'openai_compatible', id: 'v', accepts_images: true },
        { provider: 'ollama', id: 'o' },
      ]),
    ).toEqual([
      { provider: 'openai_compatible', models: ['a', 'v'], imageModels: ['v'] },
      { provider: 'ollama', models: ['o'] },
    ]);
  });
});
