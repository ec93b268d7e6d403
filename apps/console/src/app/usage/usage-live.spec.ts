import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { ServerEvent } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../core/api/api-error.interceptor';
import { I18n } from '../core/i18n/i18n';
import { DISMISSED_LIMITS_STORAGE_KEY, UsageLive } from './usage-live';
import { limitStatus } from './usage-testing';
import { limitBannerText } from './usage-messages';

const done = (chatId: string): ServerEvent => ({ event: 'done', chat_id: chatId, duration_sec: 1, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, cancelled: false });

describe('UsageLive', () => {
  let live: UsageLive;
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
    live = TestBed.inject(UsageLive);
  });

  afterEach(() => {
    http.verify();
    localStorage.clear();
  });

  it('Scenario: a limit past its warning share shows a dismissible banner in the chat', async () => {
    live.start();
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [limitStatus({ state: 'ok', share: 0.5, used: 500 })] });
    await settle();
    expect(live.banner()).toBeNull();

    // a usage_warning event of the running turn
    live.onEvent({ event: 'usage_warning', chat_id: 'c1', limit: limitStatus() });
    const shown = live.banner();
    expect(shown?.id).toBe('daily');
    const i18n = TestBed.inject(I18n);
    expect(limitBannerText(i18n, shown!)).toMatch(/^You have used 85% of your daily limit for all models \(850 of 1,000\); it resets .+\.$/);

    live.dismiss(shown!);
    expect(live.banner()).toBeNull();
    expect(JSON.parse(localStorage.getItem(DISMISSED_LIMITS_STORAGE_KEY) ?? '[]')).toHaveLength(1);

    // the turn's done refreshes the status: the limit is reached now, so the banner is back
    live.onEvent(done('c1'));
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [limitStatus({ state: 'reached', share: 1, used: 1000 })] });
    await settle();
    expect(live.banner()?.state).toBe('reached');
    expect(limitBannerText(i18n, live.banner()!)).toMatch(/^You have reached your daily limit for all models \(1,000 of 1,000\)/);
  });

  it('a refusal brings its limit; a failed status request shows no banner', async () => {
    live.start();
    http.expectOne('/api/usage/limits/status').flush({ type: 'about:blank', title: 'Not Found', status: 404 }, { status: 404, statusText: 'Not Found' });
    await settle();
    expect(live.banner()).toBeNull();
    live.onEvent({ event: 'error', chat_id: 'c1', detail: 'refused', code: 'spend_limit_reached', limit: limitStatus({ state: 'reached', share: 1 }) });
    expect(live.banner()?.state).toBe('reached');
  });

  it('loads a chat’s totals and reloads them after its done', async () => {
    live.start();
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [] });
    void live.loadChat('c:1');
    const totals = { calls: 1, prompt_tokens: 1, cached_tokens: 0, completion_tokens: 1, total_tokens: 2, estimated_calls: 0, unpriced_calls: 0, cost: [{ amount: 0.01, currency: 'USD' }] };
    http.expectOne('/api/usage/chats/c%3A1').flush({ chat_id: 'c:1', totals });
    await settle();
    expect(live.chatUsage('c:1')?.totals.cost).toEqual([{ amount: 0.01, currency: 'USD' }]);
    live.onEvent(done('c:1'));
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [] });
    http.expectOne('/api/usage/chats/c%3A1').flush({ chat_id: 'c:1', totals: { ...totals, calls: 2 } });
    await settle();
    expect(live.chatUsage('c:1')?.totals.calls).toBe(2);
    // a chat never shown is not fetched on its done
    live.onEvent(done('other'));
    http.expectOne('/api/usage/limits/status').flush({ time_zone: 'UTC', warn_at: 0.8, limits: [] });
    expect(live.chatUsage('other')).toBeNull();
  });
});
