import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { UsageSettingsPage } from './usage-settings-page';

const PRICES = { prices: [{ provider: 'openai_compatible' as const, model: 'gpt-a', input_per_million: 0.15, output_per_million: 0.6, currency: 'USD' }] };
const LIMITS = { warn_at: 0.8, limits: [] };

describe('UsageSettingsPage', () => {
  let fixture: ComponentFixture<UsageSettingsPage>;
  let http: HttpTestingController;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      fixture.detectChanges();
    }
  };
  const element = () => fixture.nativeElement as HTMLElement;
  const all = <T extends HTMLElement>(id: string) => [...element().querySelectorAll<T>(`[data-testid="${id}"]`)];
  const byTestId = <T extends HTMLElement>(id: string) => all<T>(id)[0] ?? null;
  const type = (input: HTMLInputElement | HTMLSelectElement, value: string) => {
    input.value = value;
    input.dispatchEvent(new Event(input instanceof HTMLSelectElement ? 'change' : 'input'));
    fixture.detectChanges();
  };
  const page = () => fixture.componentInstance;

  beforeEach(async () => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(UsageSettingsPage);
    fixture.detectChanges();
    http.expectOne('/api/usage/prices').flush(PRICES);
    http.expectOne('/api/usage/limits').flush(LIMITS);
    await settle();
  });

  afterEach(() => http.verify());

  it('Scenario: prices are edited in Settings and saved as the price table', async () => {
    expect(all('price-row')).toHaveLength(1);
    expect(byTestId<HTMLInputElement>('price-model')!.value).toBe('gpt-a');
    expect(page().hasUnsavedChanges()).toBe(false);
    byTestId<HTMLButtonElement>('price-add')!.click();
    fixture.detectChanges();
    expect(page().hasUnsavedChanges()).toBe(true);
    const row = all('price-row')[1];
    type(row.querySelector<HTMLInputElement>('[data-testid="price-model"]')!, 'llama3');
    type(row.querySelector<HTMLSelectElement>('[data-testid="price-provider"]')!, 'ollama');
    type(row.querySelector<HTMLInputElement>('[data-testid="price-input"]')!, '0');
    type(row.querySelector<HTMLInputElement>('[data-testid="price-output"]')!, '0.1');
    byTestId<HTMLButtonElement>('prices-save')!.click();
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/usage/prices');
    expect(put.request.body).toEqual({
      prices: [
        PRICES.prices[0],
        { provider: 'ollama', model: 'llama3', input_per_million: 0, output_per_million: 0.1, currency: 'USD' },
      ],
    });
    put.flush(put.request.body);
    await settle();
    expect(byTestId('prices-message')?.textContent).toContain('Saved');
    expect(page().hasUnsavedChanges()).toBe(false);
  });

  it("Scenario: the server's field errors show next to their fields", async () => {
    type(byTestId<HTMLInputElement>('price-currency')!, 'XYZ');
    byTestId<HTMLButtonElement>('prices-save')!.click();
    await settle();
    http
      .expectOne((request) => request.method === 'PUT' && request.url === '/api/usage/prices')
      .flush(
        { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'prices.0.currency: unknown currency', errors: [{ field: 'prices.0.currency', message: 'unknown currency XYZ' }] },
        { status: 422, statusText: 'Unprocessable Entity' },
      );
    await settle();
    expect(byTestId('price-currency-error')?.textContent?.trim()).toBe('unknown currency XYZ');
    // editing the field clears the server's message
    type(byTestId<HTMLInputElement>('price-currency')!, 'EUR');
    expect(byTestId('price-currency-error')?.textContent?.trim() ?? '').toBe('');
    expect(page().hasUnsavedChanges()).toBe(true);
  });

  it('Scenario: limits are edited in Settings with their scope, window, unit and the warning share', async () => {
    expect(byTestId<HTMLInputElement>('limits-warn-at')!.value).toBe('80');
    byTestId<HTMLButtonElement>('limit-add')!.click();
    fixture.detectChanges();
    type(byTestId<HTMLSelectElement>('limit-scope')!, 'model');
    // client-side checks first: the model of a model limit, an amount above 0
    byTestId<HTMLButtonElement>('limits-save')!.click();
    await settle();
    expect(byTestId('limit-model-error')?.textContent?.trim()).toBe('Required');
    expect(byTestId('limit-amount-error')?.textContent?.trim()).toBe('Enter a number above 0');
    type(byTestId<HTMLInputElement>('limit-model')!, 'gpt-a');
    type(byTestId<HTMLSelectElement>('limit-unit')!, 'money');
    type(byTestId<HTMLInputElement>('limit-amount')!, '2.5');
    type(byTestId<HTMLInputElement>('limit-currency')!, 'usd');
    type(byTestId<HTMLInputElement>('limits-warn-at')!, '90');
    byTestId<HTMLButtonElement>('limits-save')!.click();
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/usage/limits');
    expect(put.request.body).toEqual({
      warn_at: 0.9,
      limits: [{ id: 'limit-1', scope: 'model', provider: 'openai_compatible', model: 'gpt-a', window: 'day', unit: 'money', amount: 2.5, currency: 'USD' }],
    });
    put.flush(put.request.body);
    await settle();
    // the chat banner follows the new limits
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.9, limits: [] });
    expect(byTestId('limits-message')?.textContent).toContain('Saved');
    expect(page().hasUnsavedChanges()).toBe(false);
  });
});
