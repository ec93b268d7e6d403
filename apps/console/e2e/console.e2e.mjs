// Browser e2e of the console (openspec/specs/console/spec.md): the built API serving the built console, the fake
// model server as the only model, Debian Chromium through playwright-core. Scenarios run in order on one server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, connected, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('CashCode console', { timeout: 240_000 }, () => {
  let fake;
  let api;
  let browser;
  let context;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  /** Text of the last assistant answer. */
  const lastAnswer = () => page.getByTestId('assistant-text').last();
  const composer = () => page.getByTestId('composer-input');

  async function sendMessage(text) {
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  async function waitForTurnEnd() {
    await page.getByTestId('send-button').waitFor({ state: 'visible' });
  }

  test('Scenario: onboarding leads to the LLM settings when no model is configured', async () => {
    await page.goto(api.url);
    await connected(page).waitFor();
    await page.getByTestId('onboarding').waitFor();
    await screenshot(page, '01-onboarding-light');
    await page.getByTestId('onboarding-action').click();
    await page.waitForURL(/\/settings\/llm$/);
    await page.getByTestId('settings-status').filter({ hasText: 'No connection configured yet' }).waitFor();
  });

  test('Scenario: settings validation messages are shown at the field', async () => {
    // client-side rule: the visible tab needs a URL (the key is optional: keyless local servers)
    await page.getByTestId('save-settings').click();
    await page.getByTestId('openai-base-url-error').filter({ hasText: 'Enter the API base URL' }).waitFor();
    assert.equal(await page.getByTestId('openai-api-key-error').filter({ hasText: 'Enter the API key' }).count(), 0);
    // the API's rule (credentials in the URL) comes back as problem+json errors[].field and lands at the field
    await page.getByTestId('openai-base-url').fill('http://user:pass@127.0.0.1:9/v1');
    await page.getByTestId('openai-api-key').fill('sk-test');
    await page.getByTestId('save-settings').click();
    await page.getByTestId('openai-base-url-error').filter({ hasText: 'must not contain credentials' }).waitFor();
    await screenshot(page, '02-settings-field-error');
  });

  test('Scenario: configure the model in Settings (test connection, save)', async () => {
    await page.getByTestId('openai-base-url').fill(fake.baseUrl);
    await page.getByTestId('openai-api-key').fill('sk-test');
    await page.getByTestId('test-connection').click();
    const message = page.getByTestId('settings-message');
    await message.waitFor();
    assert.match(await message.innerText(), /1/, 'the test message reports the one model found');
    assert.ok(await message.evaluate((element) => element.classList.contains('cc-success')));
    await page.getByTestId('save-settings').click();
    await page.getByTestId('settings-message').filter({ hasText: 'Settings saved' }).waitFor();
    await page.getByTestId('settings-status').filter({ hasText: 'A connection is available' }).waitFor();
    await page.getByTestId('key-badge').filter({ hasText: 'Configured' }).waitFor();
    assert.equal(await page.getByTestId('openai-api-key').inputValue(), '', 'the key is write-only');
    await screenshot(page, '03-settings-saved');
    const settings = await (await fetch(`${api.url}/api/settings/llm`)).json();
    assert.equal(settings.configured, true);
    assert.equal(settings.openai_compatible.base_url, fake.baseUrl);
  });

  test('Scenario: an answer streams in as it is written, after a tool call block', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'list_dir', arguments: '{"path":"."}' }] },
      {
        chunks: ['Here ', 'is ', 'a **streamed** ', 'answer ', 'with `code`:\n\n', '```js\nconst x = 1;\n```\n\n', '| a | b |\n|---|---|\n| 1 | 2 |'],
        chunkDelayMs: 150,
      },
    );
    await page.getByTestId('new-chat').click();
    await page.waitForURL(new RegExp(`^${api.url}/?$`));
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    // record the answer's length each time the DOM changes
    await page.evaluate(() => {
      window.__samples = [];
      new MutationObserver(() => {
        const answers = document.querySelectorAll('[data-testid="assistant-text"]');
        const last = answers[answers.length - 1];
        if (last) window.__samples.push({ at: performance.now(), length: last.textContent.length });
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await sendMessage('  List the workspace and explain.  ');
    await page.getByTestId('user-message').filter({ hasText: 'List the workspace and explain.' }).waitFor();
    await page.getByTestId('stop-button').waitFor();
    const tool = page.getByTestId('tool-block').first();
    await tool.getByTestId('tool-name').filter({ hasText: 'list_dir' }).waitFor();
    await page.locator('cc-tool-block[data-status="ok"]').waitFor();
    await tool.getByTestId('tool-duration').waitFor();
    await lastAnswer().filter({ hasText: 'Here is' }).waitFor();
    await screenshot(page, '04-streaming');
    await waitForTurnEnd();
    const samples = await page.evaluate(() => window.__samples);
    const lengths = [...new Set(samples.map((sample) => sample.length))].filter((length) => length > 0);
    assert.ok(lengths.length >= 4, `text grew in steps, saw lengths ${lengths.join(',')}`);
    for (let i = 1; i < lengths.length; i++) assert.ok(lengths[i] > lengths[i - 1], 'the answer only grows while streaming');
    const growing = samples.filter((sample) => sample.length > 0);
    assert.ok(growing.at(-1).at - growing[0].at >= 400, 'the text arrived over time, not at once');
    // rendered Markdown: bold, highlighted code with a copy button, a table
    const answer = lastAnswer();
    assert.equal(await answer.locator('strong').innerText(), 'streamed');
    await answer.locator('.cc-code button[data-copy-code]').waitFor();
    assert.equal(await answer.locator('td').count(), 2);
    // the tool block expands to its arguments and result preview
    await tool.locator('.cc-tool-head').click();
    await tool.getByTestId('tool-result').waitFor();
    const sent = fake.completions[0].body;
    assert.equal(sent.model, 'fake-model');
    assert.equal(sent.messages.at(-1).content, 'List the workspace and explain.');
    await screenshot(page, '05-chat-light');
    await page.getByTestId('theme-toggle').click();
    await page.waitForFunction(() => document.documentElement.classList.contains('cc-dark'));
    await screenshot(page, '06-chat-dark');
    await page.getByTestId('theme-toggle').click();
  });

  test('Scenario: stop a streaming answer (partial text kept, marked stopped)', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    fake.enqueue({ chunks: words, chunkDelayMs: 200 });
    await sendMessage('Tell me a long story');
    await lastAnswer().filter({ hasText: 'word2' }).waitFor();
    await page.getByTestId('stop-button').click();
    await page.getByTestId('stopped-marker').waitFor();
    await waitForTurnEnd();
    const partial = await lastAnswer().innerText();
    assert.match(partial, /word0 word1 word2/);
    assert.doesNotMatch(partial, /word59/, 'the answer was cut short');
    assert.equal(await page.getByTestId('chat-error').count(), 0, 'no misleading error banner');
    assert.equal(await composer().isEnabled(), true);
    await screenshot(page, '07-stopped');
  });

  test('Scenario: reload shows the history of the open chat', async () => {
    const before = await page.getByTestId('user-message').allInnerTexts();
    await page.reload();
    await connected(page).waitFor();
    await page.getByTestId('user-message').nth(1).waitFor();
    assert.deepEqual(await page.getByTestId('user-message').allInnerTexts(), before);
    assert.match(await page.getByTestId('assistant-text').first().innerText(), /streamed answer/);
    assert.match(await lastAnswer().innerText(), /word0 word1/, 'the stopped partial answer was persisted');
    await page.getByTestId('session-row').first().waitFor();
  });

  test('Scenario: rename a session inline', async () => {
    const row = page.getByTestId('session-row').first();
    await row.hover();
    await row.getByTestId('session-more').click();
    await page.getByTestId('session-rename').click();
    const input = row.locator('input.cc-rename');
    await input.waitFor();
    await input.fill('  Workspace tour  ');
    await input.press('Enter');
    await row.getByTestId('session-title').filter({ hasText: 'Workspace tour' }).waitFor();
    const { sessions } = await (await fetch(`${api.url}/api/sessions`)).json();
    assert.ok(sessions.some((session) => session.title === 'Workspace tour'));
    await screenshot(page, '08-renamed');
  });

  test('Scenario: delete a session after confirming', async () => {
    // a second session to delete
    fake.enqueue({ content: 'Second answer' });
    await page.getByTestId('new-chat').click();
    await page.getByTestId('composer-input').waitFor();
    await sendMessage('Second chat');
    await lastAnswer().filter({ hasText: 'Second answer' }).waitFor();
    await waitForTurnEnd();
    await page.getByTestId('session-row').nth(1).waitFor();
    const { sessions: beforeDelete } = await (await fetch(`${api.url}/api/sessions`)).json();
    assert.equal(beforeDelete.length, 2);
    const target = page.locator('[data-testid="session-row"].cc-active');
    const chatId = await target.getAttribute('data-chat-id');
    await target.hover();
    await target.getByTestId('session-more').click();
    await page.getByTestId('session-delete').click();
    const dialog = page.locator('mat-dialog-container');
    await dialog.waitFor();
    await screenshot(page, '09-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.locator(`[data-testid="session-row"][data-chat-id="${chatId}"]`).waitFor({ state: 'detached' });
    const { sessions } = await (await fetch(`${api.url}/api/sessions`)).json();
    assert.deepEqual(sessions.map((session) => session.title), ['Workspace tour']);
    // the first remaining session is open now, with its history
    await page.getByTestId('user-message').filter({ hasText: 'List the workspace and explain.' }).waitFor();
  });

  test('Scenario: the console reconnects and re-attaches the open chat', async () => {
    await api.stop({ keepData: true });
    await page.locator('[data-testid="connection-state"]:not([data-state="connected"])').waitFor();
    api = await startApi(api);
    await connected(page).waitFor({ timeout: 40_000 });
    fake.enqueue({ chunks: ['Back ', 'again'], chunkDelayMs: 50 });
    await sendMessage('Are you there?');
    await lastAnswer().filter({ hasText: 'Back again' }).waitFor();
    await waitForTurnEnd();
    const { sessions } = await (await fetch(`${api.url}/api/sessions`)).json();
    assert.equal(sessions.length, 1, 'the message went to the re-attached chat, not a new one');
  });

  test('Scenario: the console speaks Simplified Chinese', async () => {
    await page.getByTestId('language-button').click();
    await page.getByRole('menuitem', { name: '简体中文' }).click();
    await page.getByTestId('new-chat').filter({ hasText: '新建对话' }).waitFor();
    await page.reload();
    await page.getByTestId('new-chat').filter({ hasText: '新建对话' }).waitFor();
    await screenshot(page, '10-zh-cn');
    await page.getByTestId('language-button').click();
    await page.getByRole('menuitem', { name: 'English' }).click();
  });

  test('the console raised no uncaught errors during the scenarios', () => {
    assert.deepEqual(pageErrors, []);
  });
});
