// Browser e2e of what a reload keeps (openspec/specs/console/spec.md, openspec/specs/sessions/spec.md): the built API
// serving the built console, Debian Chromium through playwright-core. A server in UTC and a browser in Asia/Shanghai
// agree on a chat's age; a failed prompt and a turn's tool cards are still there after a reload.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Chat reload', { timeout: 180_000 }, () => {
  let api;
  let fake;
  let browser;
  const pageErrors = [];
  const previousTz = process.env.TZ;

  before(async () => {
    assertBuilt();
    // the harness passes this process's environment to the API: the server runs in UTC
    process.env.TZ = 'UTC';
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-reload' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
  });

  after(async () => {
    if (previousTz === undefined) delete process.env.TZ;
    else process.env.TZ = previousTz;
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function openPage() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return { context, page };
  }

  async function newChatAndSend(page, text) {
    await page.goto(api.url);
    await page.getByTestId('new-chat').click();
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  test('Scenario: after a reload a failed prompt is still there with its error and Retry, and Retry answers it', async () => {
    const { context, page } = await openPage();
    try {
      fake.enqueue({ status: 401 });
      await newChatAndSend(page, 'Plan my week');
      const failure = page.getByTestId('turn-error');
      await failure.waitFor();
      assert.equal(await failure.getAttribute('data-kind'), 'auth');
      await page.reload();
      await page.getByTestId('user-message').filter({ hasText: 'Plan my week' }).waitFor();
      await failure.waitFor();
      assert.equal(await failure.getAttribute('data-kind'), 'auth');
      assert.doesNotMatch(await failure.innerText(), /sk-|fake error/);
      await page.getByTestId('turn-retry').waitFor();
      await screenshot(page, 'chat-reload-02-failed-prompt-after-reload');

      fake.enqueue({ content: 'Monday: rest.' });
      await page.getByTestId('turn-retry').click();
      await page.getByTestId('assistant-text').filter({ hasText: 'Monday: rest.' }).waitFor();
      // append-only: the failed prompt keeps its marker, the retry is a new message with its answer
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'Monday: rest.' }).waitFor();
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'Plan my week' }).count(), 2);
      assert.equal(await page.getByTestId('turn-error').count(), 1);
      const last = fake.completions.at(-1);
      const users = last.body.messages.filter((message) => message.role === 'user');
      assert.deepEqual(users.map((message) => message.content), ['Plan my week'], 'the model gets the prompt once');
      await screenshot(page, 'chat-reload-03-retry-answered');
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: after a reload a tool-using turn shows the same tool cards as live', async () => {
    const { context, page } = await openPage();
    try {
      fake.enqueue({ toolCalls: [{ name: 'list_dir', arguments: '{"path":"."}' }] }, { content: 'Listed the workspace.' });
      await newChatAndSend(page, 'What is in my workspace?');
      await page.getByTestId('assistant-text').filter({ hasText: 'Listed the workspace.' }).waitFor();
      const live = page.locator('cc-tool-block');
      await live.first().waitFor();
      const liveStatus = await live.first().getAttribute('data-status');
      const liveName = await live.first().getByTestId('tool-name').innerText();
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'Listed the workspace.' }).waitFor();
      const reloaded = page.locator('cc-tool-block');
      await reloaded.first().waitFor();
      assert.equal(await reloaded.count(), 1);
      assert.equal(await reloaded.first().getAttribute('data-status'), liveStatus);
      assert.equal(await reloaded.first().getByTestId('tool-name').innerText(), liveName);
      assert.match(await reloaded.first().getByTestId('tool-duration').innerText(), /\d/);
      await screenshot(page, 'chat-reload-04-tool-cards-after-reload');
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: a new chat reads "just now" in a browser eight hours ahead of the server', async () => {
    const chatDir = join(api.dir, 'data', 'memory', 'tz-check');
    mkdirSync(chatDir, { recursive: true });
    writeFileSync(
      join(chatDir, 'history.jsonl'),
      `${JSON.stringify({ cursor: 1, timestamp: '2026-07-02 10:00', role: 'user', content: 'hello' })}\n`,
    );
    writeFileSync(join(chatDir, 'metadata.json'), JSON.stringify({ title: 'Time zone check' }));

    const listed = await (await fetch(`${api.url}/api/sessions`)).json();
    const session = listed.sessions.find((item) => item.chat_id === 'tz-check');
    assert.match(session.updated_at, /\+00:00$/, 'a UTC server sends its offset');

    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
      locale: 'en-US',
      timezoneId: 'Asia/Shanghai',
    });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      assert.equal(await page.evaluate(() => new Date(Date.UTC(2026, 0, 1)).getTimezoneOffset()), -480);
      await page.goto(api.url);
      const row = page.getByTestId('session-row').filter({ hasText: 'Time zone check' });
      await row.waitFor();
      await row.locator('.cc-session-time').filter({ hasText: 'just now' }).waitFor();
      await screenshot(page, 'chat-reload-01-timezone-just-now');
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });
});
