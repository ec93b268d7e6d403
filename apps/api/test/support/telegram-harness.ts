/**
 * Shared set-up of the Telegram channel e2e suites: the real app with CASHCODE_TELEGRAM_API_ROOT pointing at the fake
 * Bot API (fake-telegram-server.ts) and the fake model, the channel configured over REST, and helpers to pair the
 * owner and to wait for what the bot sent.
 */
import type { TelegramChannelSettings } from '@cashcode/contracts';
import { FakeModelServer } from './fake-model-server';
import { FakeTelegramServer, type StoredMessage, type TgUser } from './fake-telegram-server';
import { startTestApp, type TestApp } from './test-app';
import { configureFakeModel } from './ws-client';

export const OWNER: TgUser = { id: 4242, first_name: 'Ada', last_name: 'Owner', username: 'ada' };
export const STRANGER: TgUser = { id: 5151, first_name: 'Mallory', username: 'mallory' };

export interface TelegramHarness {
  t: TestApp;
  tg: FakeTelegramServer;
  fake: FakeModelServer;
}

export async function api<T = unknown>(t: TestApp, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${t.httpUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as T };
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined> | T | null | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

export async function waitForStatus(t: TestApp, status: TelegramChannelSettings['status']): Promise<TelegramChannelSettings> {
  return waitFor(async () => {
    const { body } = await api<TelegramChannelSettings>(t, 'GET', '/api/channels/telegram');
    return body.status === status ? body : null;
  }, `channel status ${status}`);
}

/** Starts (or restarts, with `dirs`) the app against the fakes and enables the channel. */
export async function startTelegramApp(
  tg: FakeTelegramServer,
  fake: FakeModelServer,
  dirs: { dataDir?: string; configDir?: string } = {},
  configure = true,
): Promise<TestApp> {
  const t = await startTestApp({ env: { CASHCODE_TELEGRAM_API_ROOT: tg.baseUrl }, ...dirs });
  if (configure) {
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const put = await api(t, 'PUT', '/api/channels/telegram', {
      enabled: true,
      token: tg.validToken,
      model: { provider: 'openai_compatible', model: 'fake-model' },
    });
    if (put.status !== 200) throw new Error(`PUT /api/channels/telegram → ${put.status}`);
  }
  await waitForStatus(t, 'connected');
  return t;
}

/** The owner writes, gets a code, the code is approved over REST; resolves once the bot confirmed the pairing. */
export async function pairOwner(t: TestApp, tg: FakeTelegramServer, user: TgUser = OWNER): Promise<void> {
  const before = tg.messagesIn(user.id).length;
  tg.queueMessage({ from: user, text: 'hello' });
  const codeMessage = await waitFor(() => tg.messagesIn(user.id)[before], 'the pairing code');
  const code = /Pairing code: ([A-Z0-9]+)/.exec(FakeTelegramServer.visible(codeMessage))?.[1];
  if (!code) throw new Error(`no code in ${codeMessage.text}`);
  const approved = await api(t, 'POST', `/api/channels/telegram/pairings/${code}/approve`);
  if (approved.status !== 200) throw new Error(`approve → ${approved.status}`);
  await waitFor(() => tg.messagesIn(user.id)[before + 1], 'the pairing confirmation');
}

/** The bot's messages in a chat after index `from`, waiting until `count` exist. */
export async function botMessages(tg: FakeTelegramServer, chatId: number, count: number, from = 0): Promise<StoredMessage[]> {
  return waitFor(() => {
    const list = tg.messagesIn(chatId).slice(from);
    return list.length >= count ? list : null;
  }, `${count} bot message(s) in chat ${chatId}`);
}

/** Waits until a message's visible text satisfies `check` (e.g. the final edit). */
export async function settled(tg: FakeTelegramServer, message: StoredMessage, check: (text: string) => boolean): Promise<string> {
  return waitFor(() => {
    const text = FakeTelegramServer.visible(message);
    return check(text) ? text : null;
  }, 'the message to settle');
}
