// Browser e2e of the everyday chat actions (openspec/specs/console/spec.md): the built API serving the built console,
// the fake model server as the only model, Debian Chromium through playwright-core.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, eventually, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('CashCode console: chat actions', { timeout: 180_000 }, () => {
  let fake;
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
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const settings = await rest('PUT', '/api/settings/llm', {
      openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test' },
      ollama: {},
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    browser = await launchBrowser();
    context = await browser.newContext({
      viewport: { width: 1280, height: 820 },
      acceptDownloads: true,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
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

  async function sendMessage(text) {
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  /** Opens the row's menu, clicks `item` and returns the saved download's name and text. */
  async function download(row, item) {
    await row.hover();
    await row.getByTestId('session-more').click();
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId(item).click()]);
    const path = await file.path();
    return { name: file.suggestedFilename(), text: await readFile(path, 'utf8') };
  }

  test('Scenario: export a chat as Markdown and as JSON from the session menu', async () => {
    fake.enqueue({ content: 'Paris is the **capital** of France.' });
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await sendMessage('What is the capital of France?');
    await page.getByTestId('assistant-text').filter({ hasText: 'capital of France' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    const row = page.getByTestId('session-row').first();
    await row.waitFor();
    const chatId = await row.getAttribute('data-chat-id');
    assert.ok(chatId);
    await rest('PATCH', `/api/sessions/${encodeURIComponent(chatId)}`, { title: 'Capitals' });
    await page.reload();
    await row.getByTestId('session-title').filter({ hasText: 'Capitals' }).waitFor();

    await row.hover();
    await row.getByTestId('session-more').click();
    await page.getByTestId('session-export-markdown').waitFor();
    await screenshot(page, 'chat-actions-01-export-menu');
    await page.keyboard.press('Escape');

    const markdown = await download(row, 'session-export-markdown');
    assert.equal(markdown.name, `cashcode-${chatId.replace(/:/g, '_')}.md`);
    assert.ok(markdown.text.startsWith('# Capitals\n'), markdown.text);
    assert.match(markdown.text, /## User\n\nWhat is the capital of France\?\n\n## Assistant\n\nParis is the \*\*capital\*\* of France\.\n$/);

    const json = await download(row, 'session-export-json');
    assert.equal(json.name, `cashcode-${chatId.replace(/:/g, '_')}.json`);
    const document = JSON.parse(json.text);
    const projection = await rest('GET', `/api/sessions/${encodeURIComponent(chatId)}/messages`);
    assert.equal(document.format, 'cashcode.session-export');
    assert.equal(document.title, 'Capitals');
    assert.deepEqual(document.messages, projection.body.messages);
  });

  test('Scenario: search the chats from the sidebar and open a result', async () => {
    fake.enqueue({ content: 'Boil it for seven minutes.' });
    await page.getByTestId('new-chat').click();
    await sendMessage('How long to boil an egg?');
    await page.getByTestId('assistant-text').filter({ hasText: 'seven minutes' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    await page.getByTestId('session-row').nth(1).waitFor();
    const search = page.getByTestId('session-search');
    await search.fill('capital');
    const result = page.getByTestId('search-result');
    await result.filter({ hasText: 'Capitals' }).waitFor();
    assert.equal(await result.count(), 1);
    // only the answer says "seven": a content match with its snippet
    await search.fill('seven');
    await page.getByTestId('search-snippet').filter({ hasText: 'seven minutes' }).waitFor();
    await screenshot(page, 'chat-actions-03-search');
    await search.fill('nothing-matches-this');
    await page.getByTestId('search-empty').filter({ hasText: 'No chats match' }).waitFor();
    await search.fill('capital');
    await result.filter({ hasText: 'Capitals' }).click();
    await page.getByTestId('assistant-text').filter({ hasText: 'capital of France' }).waitFor();
    await search.fill('');
    await page.getByTestId('session-list').waitFor();
  });

  test('Scenario: a failed export is reported and downloads nothing', async () => {
    const row = page.getByTestId('session-row').first();
    const chatId = await row.getAttribute('data-chat-id');
    // the chat disappears behind the console's back: the export answers 404
    assert.equal((await rest('DELETE', `/api/sessions/${encodeURIComponent(chatId)}`)).status, 204);
    let downloads = 0;
    page.on('download', () => downloads++);
    await row.hover();
    await row.getByTestId('session-more').click();
    await page.getByTestId('session-export-markdown').click();
    await page.locator('mat-snack-bar-container').filter({ hasText: 'Could not export the conversation' }).waitFor();
    await screenshot(page, 'chat-actions-02-export-failed');
    assert.equal(downloads, 0);
  });

  test('Scenario: copy a message, regenerate the last answer and edit and resend a message', async () => {
    fake.enqueue({ content: 'Answer number one.' });
    await page.getByTestId('new-chat').click();
    await sendMessage('Pick a number');
    const answers = page.getByTestId('assistant-text');
    await answers.filter({ hasText: 'Answer number one.' }).waitFor();
    await page.getByTestId('send-button').waitFor();

    // copy puts the answer's text on the clipboard
    await page.getByTestId('assistant-message').locator('..').getByTestId('copy-message').click();
    await eventually(async () =>
      assert.equal(await page.evaluate(() => globalThis.navigator.clipboard.readText()), 'Answer number one.'),
    );

    // regenerate: the old answer is replaced by the new one
    fake.enqueue({ content: 'Answer number two.' });
    await page.getByTestId('regenerate-answer').click();
    await answers.filter({ hasText: 'Answer number two.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.equal(await answers.count(), 1);
    assert.equal(await page.getByTestId('user-message').count(), 1);
    await screenshot(page, 'chat-actions-04-regenerated');

    // edit and resend: the inline editor replaces the message and its answer
    fake.enqueue({ content: 'Seven it is.' });
    await page.getByTestId('edit-message').click();
    await page.getByTestId('edit-input').fill('Pick a number between 1 and 9');
    await screenshot(page, 'chat-actions-05-editing');
    await page.getByTestId('edit-save').click();
    await answers.filter({ hasText: 'Seven it is.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.deepEqual(await page.getByTestId('user-message').allTextContents(), ['Pick a number between 1 and 9']);
    assert.equal(await answers.count(), 1);
    const last = fake.completions.at(-1).body.messages.filter((m) => m.role !== 'system');
    assert.deepEqual(last, [{ role: 'user', content: 'Pick a number between 1 and 9' }]);

    // a cancelled edit changes nothing; after a reload the current branch is shown
    await page.getByTestId('edit-message').click();
    await page.getByTestId('edit-input').fill('never sent');
    await page.getByTestId('edit-cancel').click();
    await page.reload();
    await answers.filter({ hasText: 'Seven it is.' }).waitFor();
    assert.deepEqual(await page.getByTestId('user-message').allTextContents(), ['Pick a number between 1 and 9']);
    assert.equal(await answers.count(), 1);
  });

  test('Scenario: continue a stopped answer', async () => {
    fake.enqueue({ chunks: ['Once upon ', 'a time'], hangAfterChunks: true });
    await page.getByTestId('new-chat').click();
    await sendMessage('Tell me a story');
    const answer = page.getByTestId('assistant-text');
    await answer.filter({ hasText: 'Once upon a time' }).waitFor();
    await page.getByTestId('stop-button').click();
    await page.getByTestId('stopped-marker').waitFor();
    await page.getByTestId('continue-answer').waitFor();
    await screenshot(page, 'chat-actions-06-stopped');

    fake.enqueue({ chunks: [' there was', ' a fox.'] });
    await page.getByTestId('continue-answer').click();
    await answer.filter({ hasText: 'Once upon a time there was a fox.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.equal(await answer.count(), 1);
    assert.equal(await page.getByTestId('stopped-marker').count(), 0);
    assert.equal(await page.getByTestId('continue-answer').count(), 0);
    await screenshot(page, 'chat-actions-07-continued');
    await page.reload();
    await answer.filter({ hasText: 'Once upon a time there was a fox.' }).waitFor();
    assert.equal(await answer.count(), 1);
  });

  test('Scenario: a regenerate stopped before any text keeps the previous answer', async () => {
    fake.enqueue({ content: 'The first answer.' });
    await page.getByTestId('new-chat').click();
    await sendMessage('Answer me');
    const answers = page.getByTestId('assistant-text');
    await answers.filter({ hasText: 'The first answer.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    fake.enqueue({ chunks: [], hangAfterChunks: true });
    const asked = fake.completions.length;
    await page.getByTestId('regenerate-answer').click();
    // the model call is running (and has streamed nothing) when Stop is clicked
    for (let i = 0; i < 200 && fake.completions.length === asked; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(fake.completions.length, asked + 1);
    await page.getByTestId('stop-button').click();
    // nothing was persisted: the server's branch (the first answer) is shown again
    await answers.filter({ hasText: 'The first answer.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.equal(await answers.count(), 1);
    assert.equal(await page.getByTestId('stopped-marker').count(), 0);
  });

  test('Scenario: tokens and duration show on each answer and as a total for the chat', async () => {
    fake.enqueue({ content: 'Counted answer.', usage: { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165 } });
    await page.getByTestId('new-chat').click();
    await sendMessage('Count please');
    await page.getByTestId('assistant-text').filter({ hasText: 'Counted answer.' }).waitFor();
    const stats = page.getByTestId('answer-stats');
    await stats.filter({ hasText: '120 in · 45 out' }).waitFor();
    assert.match(await stats.first().textContent(), /^\d+\.\d s · 120 in · 45 out$/);
    fake.enqueue({ content: 'No usage here.', omitUsage: true });
    await sendMessage('And without usage?');
    await page.getByTestId('assistant-text').filter({ hasText: 'No usage here.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    await stats.nth(1).waitFor();
    assert.match(await stats.nth(1).textContent(), /^\d+\.\d s$/);
    const total = page.getByTestId('chat-usage-total');
    assert.match(await total.textContent(), /^This chat: 165 tokens · \d+\.\d s$/);
    await screenshot(page, 'chat-actions-08-usage');
    // after a reload the projection brings the same numbers back
    await page.reload();
    await page.getByTestId('assistant-text').filter({ hasText: 'No usage here.' }).waitFor();
    await stats.filter({ hasText: '120 in · 45 out' }).waitFor();
    assert.match(await total.textContent(), /^This chat: 165 tokens/);
  });

  test('Scenario: an answer shows the prompt tokens the provider served from its cache', async () => {
    fake.enqueue({
      content: 'Mostly cached.',
      usage: { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 100 } },
    });
    await page.getByTestId('new-chat').click();
    await sendMessage('Cache please');
    await page.getByTestId('assistant-text').filter({ hasText: 'Mostly cached.' }).waitFor();
    const stats = page.getByTestId('answer-stats').filter({ hasText: '120 in (100 cached) · 45 out' });
    await stats.waitFor();
    assert.match(await stats.textContent(), /^\d+\.\d s · 120 in \(100 cached\) · 45 out$/);
    await page.reload();
    await page.getByTestId('assistant-text').filter({ hasText: 'Mostly cached.' }).waitFor();
    await stats.waitFor();
  });

  test('the console raised no uncaught errors during the scenarios', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('CashCode console: model-written titles', { timeout: 120_000 }, () => {
  let fake;
  let api;
  let browser;
  let page;

  before(async () => {
    fake = await FakeModelServer.start();
    api = await startApi(undefined, { CASHCODE_MODEL_TITLES: 'true' });
    const response = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test' }, ollama: {} }),
    });
    assert.equal(response.status, 200);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 820 } })).newPage();
    page.setDefaultTimeout(TIMEOUT);
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  test('Scenario: the sidebar shows the model-written title live after the first answer', async () => {
    // the answer, then the title request (non-streaming) takes the next step
    fake.enqueue({ content: 'Pack light and book early.' }, { content: '"Roman holiday"', delayMs: 1500 });
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('composer-input').fill('CALL:[["plan"]] Plan a long weekend in Rome for my family');
    await page.getByTestId('composer-input').press('Enter');
    const title = page.getByTestId('session-row').first().getByTestId('session-title');
    // the fallback first: clean text, 40 characters
    await title.filter({ hasText: /^Plan a long weekend in Rome for my famil$/ }).waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'Pack light' }).waitFor();
    await title.filter({ hasText: /^Roman holiday$/ }).waitFor();
    const titleRequest = fake.completions.at(-1).body;
    assert.equal(titleRequest.stream, false);
    await screenshot(page, 'chat-actions-09-model-title');
    await page.reload();
    await title.filter({ hasText: /^Roman holiday$/ }).waitFor();
  });
});
