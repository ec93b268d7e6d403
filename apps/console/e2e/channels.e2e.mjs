// Browser e2e of Settings → Channels and of channel chats in the chat list (openspec console "Requirement: Settings →
// Channels", "Requirement: Channel chats in the chat list"): the built API serving the built console, its Telegram
// channel pointed at a Bot API stand-in (e2e/support/fake-telegram-server.mjs, through CASHCODE_TELEGRAM_API_ROOT)
// where the test plays the people writing to the bot, the fake model server as the only model, Debian Chromium
// through playwright-core. The scenarios build on each other: the bot is connected by the first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { FakeTelegramServer, TEST_BOT_TOKEN } from './support/fake-telegram-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;
const ALICE = { id: 4242, first_name: 'Alice', last_name: 'Example', username: 'alice' };

describe('CashCode console: Settings → Channels and channel chats', { timeout: 240_000 }, () => {
  let fake;
  let telegram;
  let api;
  let browser;
  let context;
  let page;
  const pageErrors = [];

  async function rest(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${api.url}${path}`, init);
    const text = await response.text();
    return { status: response.status, body: text && text.startsWith('{') ? JSON.parse(text) : text };
  }

  async function until(check, message, timeoutMs = TIMEOUT) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(message);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Alice writes to the bot; an unknown sender gets a pairing code and nothing else. Returns the code. The bot tells
   * an unchanged code again at most once a minute, so a second message within the minute may get no new reply: the
   * code is then the one it told before.
   */
  async function pairingCodeFor(from, text) {
    telegram.queueMessage({ from, text });
    let pending;
    await until(async () => {
      pending = (await rest('GET', '/api/channels/telegram/pairings')).body.pending.find((entry) => entry.sender_id === String(from.id));
      return pending !== undefined && telegram.messagesIn(from.id).some((message) => /Pairing code/.test(message.text) && message.text.includes(pending.code));
    }, `no pairing code told to ${from.first_name}`);
    return pending.code;
  }

  /** The pending pairing code of a sender, as Settings → Channels lists it. */
  async function pendingCodeOf(senderId) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { body } = await rest('GET', '/api/channels/telegram/pairings');
      const pending = body.pending.find((entry) => String(entry.sender_id) === String(senderId));
      if (pending) return pending.code;
      assert.ok(Date.now() < deadline, `no pending pairing for ${senderId}: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    telegram = await FakeTelegramServer.start();
    api = await startApi(undefined, { CASHCODE_TELEGRAM_API_ROOT: telegram.baseUrl });
    const settings = await rest('PUT', '/api/settings/llm', {
      openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test' },
      ollama: {},
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await api?.stop();
    await telegram?.close();
    await fake?.close();
  });

  test('Scenario: The owner connects Telegram, approves a pairing and revokes the sender in the browser', async () => {
    await page.goto(api.url);
    await page.getByTestId('nav-channels').click();
    await page.waitForURL(/\/settings\/channels$/);
    const card = page.getByTestId('channel-telegram');
    await card.getByTestId('telegram-token-none').waitFor();
    assert.equal((await card.getByTestId('telegram-status').textContent()).trim(), 'Off');

    // a malformed token: the server's problem message, nothing stored
    await card.getByTestId('telegram-token-input').fill('not-a-token');
    await card.getByTestId('telegram-save-token').click();
    await card.getByTestId('telegram-action-error').filter({ hasText: /bot token/i }).waitFor();
    assert.equal((await rest('GET', '/api/channels/telegram')).body.token_set, false);

    // the real token: only its masked hint comes back, never the token
    await card.getByTestId('telegram-token-input').fill(TEST_BOT_TOKEN);
    await card.getByTestId('telegram-save-token').click();
    await card.getByTestId('telegram-token-hint').filter({ hasText: `…${TEST_BOT_TOKEN.slice(-4)}` }).waitFor();
    assert.equal(await card.getByTestId('telegram-token-input').count(), 0);
    assert.ok(!(await page.content()).includes(TEST_BOT_TOKEN), 'the page holds the bot token');

    // the model of the channel's turns, then Enabled: the card follows the status to Connected with the bot's name
    await card.getByTestId('telegram-model').selectOption({ label: 'fake-model (openai_compatible)' });
    await until(async () => (await rest('GET', '/api/channels/telegram')).body.model?.model === 'fake-model', 'the model choice was not saved');
    await card.getByTestId('telegram-enabled').locator('button').click();
    await card.locator('[data-testid="telegram-status"][data-status="connected"]').waitFor();
    await card.getByTestId('telegram-bot').filter({ hasText: 'Bot @cashcode_test_bot' }).waitFor();
    const stored = await rest('GET', '/api/channels/telegram');
    assert.equal(stored.body.status, 'connected');
    assert.ok(!JSON.stringify(stored.body).includes(TEST_BOT_TOKEN));

    // a stranger writes: they get a code (the model is never called) and it shows up on the open page
    const calls = fake.completions.length;
    const code = await pairingCodeFor(ALICE, 'hello?');
    assert.equal(fake.completions.length, calls, 'the model was called for an unknown sender');
    const pending = card.getByTestId('telegram-pending-row').filter({ hasText: code });
    await pending.waitFor();
    const pendingText = (await pending.textContent()).replace(/\s+/g, ' ');
    assert.match(pendingText, /Alice Example/);
    assert.match(pendingText, /@alice/);
    assert.match(pendingText, /Private chat/);
    assert.match(pendingText, /expires in \d+ min/);
    await screenshot(page, 'channels-pending');

    await pending.getByTestId('telegram-approve').click();
    const sender = card.getByTestId('telegram-sender-row').filter({ hasText: 'Alice Example' });
    await sender.waitFor();
    assert.equal(await card.getByTestId('telegram-pending-row').count(), 0);
    const pairings = await rest('GET', '/api/channels/telegram/pairings');
    assert.deepEqual(pairings.body.senders.map((entry) => entry.sender_id), [String(ALICE.id)]);

    // Revoke asks first; confirmed, the sender is gone, and the next message gets a pairing code again
    await sender.getByTestId('telegram-revoke').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await card.getByTestId('telegram-senders').filter({ hasText: 'Nobody is approved yet' }).waitFor();
    assert.deepEqual((await rest('GET', '/api/channels/telegram/pairings')).body.senders, []);
    await pairingCodeFor(ALICE, 'still there?');
    assert.equal(fake.completions.length, calls, 'the model was called for a revoked sender');
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: The owner opens a Telegram chat from the chat list and continues it', async () => {
    // Alice is let in again (through the REST call the Approve button makes) and asks something. She was told her new
    // code a moment ago (the previous scenario), and a code is re-told at most once a minute: the console's pairing
    // list has it
    telegram.queueMessage({ from: ALICE, text: 'may I?' });
    const code = await pendingCodeOf(ALICE.id);
    const approved = await rest('POST', `/api/channels/telegram/pairings/${encodeURIComponent(code)}/approve`);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    fake.enqueue({ content: 'Sunny all day in Telegram land.' });
    telegram.queueMessage({ from: ALICE, text: 'What is the weather today?' });
    await telegram.waitForMessage(ALICE.id, (text) => text.includes('Sunny all day in Telegram land.'));

    // the chat list shows it with the Telegram icon and Alice's name
    await page.goto(api.url);
    const row = page.getByTestId('session-row').filter({ has: page.getByTestId('session-channel') });
    await row.waitFor();
    assert.equal(await row.getByTestId('session-channel').getAttribute('aria-label'), 'Telegram chat with Alice Example');
    assert.equal((await row.getByTestId('session-channel-sender').textContent()).trim(), 'Alice Example');
    await row.locator('.cc-session-open').click();

    // her message says where it came from, the answer follows
    const source = page.getByTestId('message-source');
    await source.filter({ hasText: 'via Telegram · Alice Example' }).waitFor();
    await page.getByTestId('user-message').filter({ hasText: 'What is the weather today?' }).waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'Sunny all day in Telegram land.' }).waitFor();
    await screenshot(page, 'channels-chat');

    // the owner continues the chat from the console: same chat, no source line on the owner's message
    const chatUrl = page.url();
    fake.enqueue({ content: 'Rain is expected tomorrow.' });
    await typeAndSend(page, 'And tomorrow?');
    await page.getByTestId('assistant-text').filter({ hasText: 'Rain is expected tomorrow.' }).waitFor();
    assert.equal(page.url(), chatUrl);
    assert.equal(await page.getByTestId('message-source').count(), 1);
    const lastRequest = fake.completions.at(-1).body;
    const userTexts = lastRequest.messages.filter((message) => message.role === 'user').map((message) => JSON.stringify(message.content));
    assert.ok(userTexts.some((text) => text.includes('What is the weather today?')), 'the Telegram message is not in the continued chat');
    assert.ok(userTexts.at(-1).includes('And tomorrow?'));

    // Alice writes again while the chat is open: the answer streams in, then her message shows with its source
    fake.enqueue({ content: 'You are welcome, Alice.' });
    telegram.queueMessage({ from: ALICE, text: 'Thanks!' });
    await page.getByTestId('assistant-text').filter({ hasText: 'You are welcome, Alice.' }).waitFor();
    await page.getByTestId('user-message').filter({ hasText: 'Thanks!' }).waitFor();
    assert.equal(await page.getByTestId('message-source').count(), 2);
    const rows = await page.locator('li.cc-row[data-role="user"]').evaluateAll((nodes) =>
      nodes.map((node) => [node.querySelector('[data-testid="user-message"]')?.textContent.trim(), node.querySelector('[data-testid="message-source"]')?.textContent.trim() ?? null]),
    );
    assert.deepEqual(rows, [
      ['What is the weather today?', 'via Telegram · Alice Example'],
      ['And tomorrow?', null],
      ['Thanks!', 'via Telegram · Alice Example'],
    ]);
    assert.deepEqual(pageErrors, []);
  });
  test('Scenario: The automation editor delivers to an approved Telegram sender', async () => {
    // Alice is approved (the previous scenario let her in again)
    const senders = (await rest('GET', '/api/channels/telegram/pairings')).body.senders;
    assert.ok(senders.some((sender) => sender.sender_id === String(ALICE.id)), JSON.stringify(senders));
    await page.goto(api.url);
    await page.getByTestId('nav-automations').click();
    await page.getByTestId('automation-new').click();
    await page.getByTestId('automation-editor').waitFor();
    await page.getByTestId('automation-name').fill('Digest for Alice');
    await page.getByTestId('automation-prompt').fill('Write the digest.');
    await page.getByTestId('automation-model').selectOption('openai_compatible/fake-model');
    const deliver = page.getByTestId('automation-delivery');
    await deliver.locator('option', { hasText: 'Alice Example (Telegram)' }).waitFor({ state: 'attached' });
    await deliver.selectOption(String(ALICE.id));
    await screenshot(page, 'channels-automation-delivery');
    await page.getByTestId('automation-save').click();
    const row = page.getByTestId('automation-row').filter({ hasText: 'Digest for Alice' });
    await row.waitFor();
    const stored = (await rest('GET', '/api/automations')).body.automations.find((automation) => automation.name === 'Digest for Alice');
    assert.deepEqual(stored.delivery, { channel: { kind: 'telegram', chat_id: String(ALICE.id) } });
    // a run's answer reaches her Telegram chat
    fake.enqueue({ content: 'Your digest is ready.' });
    const run = await rest('POST', `/api/automations/${stored.id}/run`);
    assert.equal(run.status, 202, JSON.stringify(run.body));
    await telegram.waitForMessage(ALICE.id, (text) => text.includes('Your digest is ready.'));
    assert.deepEqual(pageErrors, []);
  });
});
