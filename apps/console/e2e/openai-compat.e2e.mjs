// Browser e2e of Settings > OpenAI-compatible API (openspec/specs/openai-compat/spec.md, "Console settings page"):
// the built API serving the built console and the fake model server, Debian Chromium through playwright-core. The
// user enables the endpoint and creates a key in the console; the key, copied from the page, then works on /v1 for an
// OpenAI client (plain HTTP here), and stops working once revoked in the console.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('OpenAI-compatible API in the console', { timeout: 300_000 }, () => {
  let fake;
  let api;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-openai-compat' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  const completion = (key) =>
    fetch(`${api.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'cashcode:openai_compatible/fake-model', messages: [{ role: 'user', content: 'hello' }] }),
    });

  test('Scenario: the console switches the endpoint on', async () => {
    await page.goto(`${api.url}/`);
    await page.getByTestId('nav-openai').click();
    await page.getByTestId('openai-status').waitFor();
    assert.equal((await page.getByTestId('openai-status').textContent()).trim(), 'Off');
    const off = await fetch(`${api.url}/v1/models`, { headers: { authorization: 'Bearer x' } });
    assert.equal(off.status, 404);
    await page.getByTestId('openai-enabled').locator('button').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="openai-status"]')?.textContent?.trim() === 'On');
    assert.match(await page.getByTestId('openai-base-url').textContent(), /\/v1$/);
  });

  test('Scenario: the console shows a new key once and lists it without its secret', async () => {
    await page.getByTestId('openai-key-name').fill('Browser e2e');
    await page.getByTestId('openai-create-key').click();
    const secret = (await page.getByTestId('openai-secret').textContent()).trim();
    assert.match(secret, /^cck_[\w-]{43}$/);
    const row = page.getByTestId('openai-key-row').filter({ hasText: 'Browser e2e' });
    await row.waitFor();
    assert.ok(!(await row.textContent()).includes(secret));
    await screenshot(page, 'openai-compat-key-created');

    fake.enqueue({ content: 'Hello from the agent' });
    const answered = await completion(secret);
    assert.equal(answered.status, 200);
    assert.equal((await answered.json()).choices[0].message.content, 'Hello from the agent');

    await page.getByTestId('openai-dismiss-key').click();
    // the console renders after the click's change detection: wait for it, then the secret is gone from the page
    await page.getByTestId('openai-secret').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('openai-secret').count(), 0);

    // revoke from the console: the key stops working at once
    await row.getByTestId('openai-revoke-key').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('openai-key-row').filter({ hasText: 'Browser e2e' }).waitFor({ state: 'detached' });
    const refused = await completion(secret);
    assert.equal(refused.status, 401);
    assert.deepEqual(pageErrors, []);
  });
});
