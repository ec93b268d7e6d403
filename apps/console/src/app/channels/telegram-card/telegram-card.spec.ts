import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import { MatDialog } from '@angular/material/dialog';
import type { TelegramChannelSettings, TelegramPairingsResponse } from '@cashcode/contracts';
import { of } from 'rxjs';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { CHANNEL_POLL_MS } from '../channel-rules';
import { TelegramCard } from './telegram-card';

const NO_TOKEN: TelegramChannelSettings = {
  enabled: false,
  token_set: false,
  token_hint: null,
  api_root: 'https://api.telegram.org',
  groups_enabled: false,
  status: 'disabled',
  error: null,
  bot_username: null,
  model: null,
};
const CONNECTED: TelegramChannelSettings = {
  ...NO_TOKEN,
  enabled: true,
  token_set: true,
  token_hint: '…wXyZ',
  status: 'connected',
  bot_username: 'cash_test_bot',
};
const EMPTY: TelegramPairingsResponse = { pending: [], senders: [] };
const PENDING: TelegramPairingsResponse = {
  pending: [
    {
      code: 'K7Q2ZP',
      sender_id: '4242',
      display_name: 'Alice Example',
      username: 'alice',
      chat_type: 'private',
      requested_at: '2026-12-04T08:00:00Z',
      expires_at: new Date(Date.now() + 9.5 * 60_000).toISOString(),
    },
  ],
  senders: [],
};
const ALICE = { sender_id: '4242', display_name: 'Alice Example', username: 'alice', approved_at: '2026-12-04T08:01:00Z', kind: 'user' } as const;
const TOKEN = '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHwXyZ';

describe('TelegramCard', () => {
  let fixture: ComponentFixture<TelegramCard>;
  let http: HttpTestingController;
  let confirmAnswer: boolean;
  let confirmTitles: string[];

  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(0);
      fixture.detectChanges();
    }
  };
  const element = () => fixture.nativeElement as HTMLElement;
  const byTestId = <T extends HTMLElement>(id: string) => element().querySelector<T>(`[data-testid="${id}"]`);
  const allByTestId = (id: string) => [...element().querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];
  const text = (id: string) => byTestId(id)?.textContent?.replace(/\s+/g, ' ').trim() ?? null;

  async function answerLoad(settings: TelegramChannelSettings, pairings: TelegramPairingsResponse): Promise<void> {
    http.expectOne((request) => request.method === 'GET' && request.url === '/api/channels/telegram').flush(settings);
    http.expectOne((request) => request.method === 'GET' && request.url === '/api/channels/telegram/pairings').flush(pairings);
    await settle();
  }

  async function create(settings: TelegramChannelSettings, pairings: TelegramPairingsResponse = EMPTY): Promise<void> {
    fixture = TestBed.createComponent(TelegramCard);
    fixture.detectChanges();
    http.expectOne('/api/settings/llm/models').flush({
      models: [
        { provider: 'openai_compatible', id: 'gpt-test' },
        { provider: 'ollama', id: 'qwen3:8b' },
      ],
      providers: {},
    });
    await answerLoad(settings, pairings);
  }

  function typeToken(value: string): void {
    const input = byTestId<HTMLInputElement>('telegram-token-input')!;
    input.value = value;
    input.dispatchEvent(new Event('input'));
  }

  beforeEach(() => {
    vi.useFakeTimers();
    confirmAnswer = true;
    confirmTitles = [];
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiErrorInterceptor])),
        provideHttpClientTesting(),
        {
          provide: MatDialog,
          useValue: {
            open: (_component: unknown, config: { data: { title: string } }) => {
              confirmTitles.push(config.data.title);
              return { afterClosed: () => of(confirmAnswer) };
            },
          },
        },
      ],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    fixture?.destroy();
    http.verify();
    vi.useRealTimers();
  });

  it('Scenario: Saving a Telegram bot token shows only its masked hint', async () => {
    await create(NO_TOKEN);
    expect(text('telegram-token-none')).toBe('No token saved');
    expect(text('telegram-status')).toBe('Off');
    typeToken(TOKEN);
    byTestId<HTMLButtonElement>('telegram-save-token')!.click();
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/channels/telegram');
    expect(put.request.body).toEqual({ token: TOKEN });
    put.flush({ ...NO_TOKEN, token_set: true, token_hint: '…wXyZ', status: 'connecting' });
    await settle();
    expect(text('telegram-token-hint')).toBe('Token saved …wXyZ');
    expect(byTestId('telegram-token-input')).toBeNull();
    expect(element().textContent).not.toContain(TOKEN);
    expect(text('telegram-status')).toBe('Connecting');

    // Replace opens an empty field again; Cancel goes back to the hint
    byTestId<HTMLButtonElement>('telegram-replace-token')!.click();
    fixture.detectChanges();
    expect(byTestId<HTMLInputElement>('telegram-token-input')!.value).toBe('');
    byTestId<HTMLButtonElement>('telegram-cancel-replace')!.click();
    fixture.detectChanges();
    expect(text('telegram-token-hint')).toBe('Token saved …wXyZ');
  });

  it("Scenario: A bad bot token shows the server's problem message", async () => {
    await create(NO_TOKEN);
    byTestId<HTMLButtonElement>('telegram-save-token')!.click();
    await settle();
    // an empty field is not sent
    expect(element().textContent).toContain('Enter the bot token');
    typeToken('not-a-token');
    byTestId<HTMLButtonElement>('telegram-save-token')!.click();
    await settle();
    http
      .expectOne((request) => request.method === 'PUT' && request.url === '/api/channels/telegram')
      .flush(
        { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'A Telegram bot token looks like 123456:ABC…' },
        { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/problem+json' } },
      );
    await settle();
    expect(text('telegram-action-error')).toBe('A Telegram bot token looks like 123456:ABC…');
    // the field stays open with what was typed, nothing saved
    expect(byTestId<HTMLInputElement>('telegram-token-input')!.value).toBe('not-a-token');
    expect(byTestId('telegram-token-hint')).toBeNull();
  });

  it("Scenario: The Telegram card shows the connection status, the bot and an error's reason", async () => {
    await create(CONNECTED);
    expect(text('telegram-status')).toBe('Connected');
    expect(byTestId('telegram-status')!.getAttribute('data-tone')).toBe('ok');
    expect(text('telegram-bot')).toBe('Bot @cash_test_bot');
    expect(byTestId('telegram-error-reason')).toBeNull();
    fixture.destroy();
    await create({ ...CONNECTED, status: 'error', error: 'Unauthorized: the bot token was revoked', bot_username: null });
    expect(text('telegram-status')).toBe('Error');
    expect(text('telegram-error-reason')).toBe('Error: Unauthorized: the bot token was revoked');
  });

  it('Scenario: The open Channels page follows the status and new pairing requests', async () => {
    await create({ ...CONNECTED, status: 'connecting', bot_username: null });
    expect(text('telegram-status')).toBe('Connecting');
    expect(allByTestId('telegram-pending-row')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(CHANNEL_POLL_MS);
    await answerLoad(CONNECTED, PENDING);
    expect(text('telegram-status')).toBe('Connected');
    const rows = allByTestId('telegram-pending-row');
    expect(rows).toHaveLength(1);
    expect(rows[0].textContent).toContain('K7Q2ZP');
    expect(rows[0].textContent).toContain('Alice Example');
    expect(rows[0].textContent).toContain('@alice');
    expect(rows[0].textContent).toContain('Private chat');
    expect(rows[0].textContent).toContain('expires in 9 min');
    // polling stops with the page
    fixture.destroy();
    await vi.advanceTimersByTimeAsync(CHANNEL_POLL_MS * 2);
    http.expectNone('/api/channels/telegram');
  });

  it('Scenario: Approving a pairing code lists the sender as approved', async () => {
    await create(CONNECTED, PENDING);
    byTestId<HTMLButtonElement>('telegram-approve')!.click();
    await settle();
    http.expectOne((request) => request.method === 'POST' && request.url === '/api/channels/telegram/pairings/K7Q2ZP/approve').flush(ALICE);
    await settle();
    http.expectOne('/api/channels/telegram/pairings').flush({ pending: [], senders: [ALICE] });
    await settle();
    expect(allByTestId('telegram-pending-row')).toHaveLength(0);
    const senders = allByTestId('telegram-sender-row');
    expect(senders).toHaveLength(1);
    expect(senders[0].textContent).toContain('Alice Example');
    expect(senders[0].textContent).toContain('@alice');
  });

  it("an expired code shows the server's 404 message", async () => {
    await create(CONNECTED, PENDING);
    byTestId<HTMLButtonElement>('telegram-approve')!.click();
    await settle();
    http
      .expectOne('/api/channels/telegram/pairings/K7Q2ZP/approve')
      .flush(
        { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No pending pairing with code K7Q2ZP (it may have expired).' },
        { status: 404, statusText: 'Not Found', headers: { 'content-type': 'application/problem+json' } },
      );
    await settle();
    expect(text('telegram-action-error')).toBe('No pending pairing with code K7Q2ZP (it may have expired).');
  });

  it('Scenario: Revoking an approved sender asks first', async () => {
    await create(CONNECTED, { pending: [], senders: [ALICE] });
    confirmAnswer = false;
    byTestId<HTMLButtonElement>('telegram-revoke')!.click();
    await settle();
    expect(confirmTitles).toEqual(['Revoke Alice Example?']);
    http.expectNone((request) => request.method === 'DELETE');
    confirmAnswer = true;
    byTestId<HTMLButtonElement>('telegram-revoke')!.click();
    await settle();
    http.expectOne((request) => request.method === 'DELETE' && request.url === '/api/channels/telegram/senders/4242').flush(null, {
      status: 204,
      statusText: 'No Content',
    });
    await settle();
    http.expectOne('/api/channels/telegram/pairings').flush(EMPTY);
    await settle();
    expect(allByTestId('telegram-sender-row')).toHaveLength(0);
    expect(text('telegram-senders')).toBe('Nobody is approved yet');
  });

  it('Scenario: Clearing the bot token asks first and sends an empty token', async () => {
    await create(CONNECTED);
    byTestId<HTMLButtonElement>('telegram-clear-token')!.click();
    await settle();
    expect(confirmTitles).toEqual(['Clear the bot token?']);
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/channels/telegram');
    expect(put.request.body).toEqual({ token: '' });
    put.flush({ ...CONNECTED, token_set: false, token_hint: null, status: 'disabled', bot_username: null });
    await settle();
    expect(text('telegram-token-none')).toBe('No token saved');
  });

  it('Scenario: Choosing the model for Telegram turns saves it at once', async () => {
    await create(CONNECTED);
    const select = byTestId<HTMLSelectElement>('telegram-model')!;
    expect([...select.options].map((option) => option.textContent?.trim())).toEqual([
      'The last model used in the console',
      'gpt-test (openai_compatible)',
      'qwen3:8b (ollama)',
    ]);
    expect(select.value).toBe('');
    select.value = 'ollama/qwen3:8b';
    select.dispatchEvent(new Event('change'));
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT' && request.url === '/api/channels/telegram');
    expect(put.request.body).toEqual({ model: { provider: 'ollama', model: 'qwen3:8b' } });
    put.flush({ ...CONNECTED, model: { provider: 'ollama', model: 'qwen3:8b' } });
    await settle();
    expect(byTestId<HTMLSelectElement>('telegram-model')!.value).toBe('ollama/qwen3:8b');
    byTestId<HTMLSelectElement>('telegram-model')!.value = '';
    byTestId<HTMLSelectElement>('telegram-model')!.dispatchEvent(new Event('change'));
    await settle();
    const reset = http.expectOne((request) => request.method === 'PUT');
    expect(reset.request.body).toEqual({ model: null });
    reset.flush(CONNECTED);
    await settle();
  });

  it('the switches save at once and flip back when the server refuses', async () => {
    await create(CONNECTED);
    byTestId('telegram-groups')!.querySelector<HTMLButtonElement>('button')!.click();
    await settle();
    const put = http.expectOne((request) => request.method === 'PUT');
    expect(put.request.body).toEqual({ groups_enabled: true });
    put.flush({ ...CONNECTED, groups_enabled: true });
    await settle();
    expect(byTestId('telegram-groups')!.querySelector('button')!.getAttribute('aria-checked')).toBe('true');
    byTestId('telegram-enabled')!.querySelector<HTMLButtonElement>('button')!.click();
    await settle();
    const refused = http.expectOne((request) => request.method === 'PUT');
    expect(refused.request.body).toEqual({ enabled: false });
    refused.flush(
      { type: 'about:blank', title: 'Internal', status: 503, detail: 'Settings could not be written.' },
      { status: 503, statusText: 'Service Unavailable', headers: { 'content-type': 'application/problem+json' } },
    );
    await settle();
    expect(text('telegram-action-error')).toBe('Settings could not be written.');
    expect(byTestId('telegram-enabled')!.querySelector('button')!.getAttribute('aria-checked')).toBe('true');
  });
});
