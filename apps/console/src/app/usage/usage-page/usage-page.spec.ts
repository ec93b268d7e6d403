import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import type { UsageSummary } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { limitStatus } from '../usage-testing';
import { UsagePage } from './usage-page';

const TOTALS = { calls: 0, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated_calls: 0, unpriced_calls: 0, cost: [] };
const SUMMARY: UsageSummary = {
  from: '2026-11-03',
  to: '2026-12-02',
  time_zone: 'Europe/Berlin',
  rows: [
    { ...TOTALS, day: '2026-12-02', provider: 'openai_compatible', model: 'gpt-a', purpose: 'chat', calls: 2, prompt_tokens: 200, completion_tokens: 40, total_tokens: 240, cost: [{ amount: 0.03, currency: 'USD' }] },
    { ...TOTALS, day: '2026-12-02', provider: 'openai_compatible', model: 'gpt-b', purpose: 'title', calls: 1, prompt_tokens: 50, completion_tokens: 10, total_tokens: 60, unpriced_calls: 1 },
  ],
  totals: { ...TOTALS, calls: 3, prompt_tokens: 250, completion_tokens: 50, total_tokens: 300, unpriced_calls: 1, cost: [{ amount: 0.03, currency: 'USD' }] },
};

describe('UsagePage', () => {
  let fixture: ComponentFixture<UsagePage>;
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
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideRouter([]), provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    fixture = TestBed.createComponent(UsagePage);
    fixture.detectChanges();
    // the first load asks for the server's default range
    const summary = http.expectOne((request) => request.url === '/api/usage/summary');
    expect(summary.request.params.keys()).toEqual([]);
    summary.flush(SUMMARY);
    http.expectOne('/api/usage/limits/status').flush({
      time_zone: 'Europe/Berlin',
      warn_at: 0.8,
      limits: [limitStatus(), limitStatus({ id: 'm', window: 'month', unit: 'money', currency: 'USD', amount: 10, used: 0.03, share: 0.003, state: 'ok' })],
    });
    await settle();
  });

  afterEach(() => http.verify());

  it('Scenario: the Usage page shows the totals, both daily charts and the limits with their use', () => {
    expect(byTestId('usage-range')?.textContent).toContain('2026-11-03 to 2026-12-02, days of Europe/Berlin');
    expect(byTestId('usage-total-tokens')?.textContent?.trim()).toBe('300');
    expect(byTestId('usage-total-cost')?.textContent?.trim()).toBe('$0.03');
    expect(byTestId('usage-unpriced')?.textContent).toContain('1');
    const legend = (id: string) => [...element().querySelectorAll(`[data-testid="${id}"] [data-testid="usage-legend-item"]`)].map((li) => [...li.children].map((part) => part.textContent?.trim()).filter(Boolean).join(' '));
    expect(legend('usage-model-legend')).toEqual(['gpt-a · OpenAI-compatible 240', 'gpt-b · OpenAI-compatible 60']);
    expect(legend('usage-purpose-legend')).toEqual(['Chat 240', 'Chat titles 60']);
    // accessible: the chart is an image with a summary, the numbers are a table too
    const svg = byTestId('usage-model-svg')!;
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.getAttribute('aria-label')).toContain('By model: Tokens per day from 2026-11-03 to 2026-12-02, largest gpt-a');
    expect(svg.querySelectorAll('rect')).toHaveLength(2);
    expect(byTestId('usage-purpose-table')?.querySelectorAll('tbody tr')).toHaveLength(1);
    // the cost view of a chart counts the priced calls only
    byTestId<HTMLElement>('usage-metric-cost-model')!.querySelector('button')!.click();
    fixture.detectChanges();
    expect(legend('usage-model-legend')).toEqual(['gpt-a · OpenAI-compatible $0.03']);

    const limits = [...element().querySelectorAll('[data-testid="usage-limit"]')];
    expect(limits.map((li) => li.getAttribute('data-state'))).toEqual(['warning', 'ok']);
    expect(limits[0].querySelector('[role="meter"]')?.getAttribute('aria-valuenow')).toBe('85');
    expect(limits[0].textContent).toContain('daily limit for all models');
    expect(limits[0].textContent).toContain('850 of 1,000 (85%)');
    expect(limits[1].textContent).toContain('$0.03 of $10.00 (0%)');
    expect(limits[1].textContent).toContain('resets');
  });

  it('Scenario: the CSV export downloads the range shown, and another range can be asked for', async () => {
    const clicked: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this.download);
    });
    byTestId<HTMLButtonElement>('usage-export')!.click();
    const csv = http.expectOne((request) => request.url === '/api/usage/export.csv');
    expect(csv.request.params.get('from')).toBe('2026-11-03');
    expect(csv.request.params.get('to')).toBe('2026-12-02');
    expect(csv.request.responseType).toBe('text');
    csv.flush('id,at,provider\n1,2026-12-02T10:00:00+01:00,openai_compatible\n');
    await settle();
    expect(clicked).toEqual(['cashcode-usage-2026-11-03-2026-12-02.csv']);
    click.mockRestore();

    const from = byTestId<HTMLInputElement>('usage-from')!;
    from.value = '2026-12-01';
    from.dispatchEvent(new Event('input'));
    byTestId<HTMLButtonElement>('usage-apply')!.click();
    const summary = http.expectOne((request) => request.url === '/api/usage/summary');
    expect(summary.request.params.get('from')).toBe('2026-12-01');
    expect(summary.request.params.get('to')).toBe('2026-12-02');
    summary.flush({ ...SUMMARY, from: '2026-12-01', rows: [], totals: TOTALS });
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [] });
    await settle();
    expect(byTestId('usage-empty')).not.toBeNull();
    expect(byTestId('usage-total-cost')?.textContent?.trim()).toBe('No price');
    expect(byTestId('usage-no-limits')).not.toBeNull();
  });

  it('a failed export says why', async () => {
    byTestId<HTMLButtonElement>('usage-export')!.click();
    http
      .expectOne((request) => request.url === '/api/usage/export.csv')
      .flush(JSON.stringify({ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'from must not be after to' }), { status: 400, statusText: 'Bad Request' });
    await settle();
    expect(byTestId('usage-export-error')?.textContent).toContain('Export failed: from must not be after to');
  });
});
