// Browser e2e of the settings a user of a local model expects (openspec/specs/console/spec.md "Requirement: A fresh
// browser preselects the last model used", "Requirement: Test connection lists the models found";
// openspec/specs/llm-settings/spec.md "Requirement: Keyless OpenAI-compatible servers"): the built API serving the
// built console, Debian Chromium through playwright-core, a keyless fake model server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Local model settings', { timeout: 180_000 }, () => {
  let api;
  let fake;
  let browser;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    fake.models = ['a-model', 'z-model'];
    api = await startApi();
    browser = await launchBrowser();
  });

  after(async () => {
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

  test('Scenario: A keyless OpenAI-compatible server gets requests without an Authorization header', async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(`${api.url}/settings/llm`);
      await page.getByTestId('openai-base-url').fill(fake.baseUrl);
      // Test connection lists the models it found, without any key
      await page.getByTestId('test-connection').click();
      await page.getByTestId('settings-message').filter({ hasText: 'Connected: found 2 models' }).waitFor();
      assert.deepEqual(await page.getByTestId('found-models').locator('li').allInnerTexts(), ['a-model', 'z-model']);
      await screenshot(page, 'local-models-01-test-connection');
      await page.getByTestId('save-settings').click();
      await page.getByTestId('settings-message').filter({ hasText: 'Settings saved' }).waitFor();
      assert.ok(fake.requests.length > 0);
      assert.deepEqual(
        fake.requests.map((request) => request.headers.authorization),
        fake.requests.map(() => undefined),
      );
    } finally {
      await context.close();
    }
  });

  test('Scenario: A fresh browser context opens with the last model used', async () => {
    const first = await openPage();
    try {
      await first.page.goto(api.url);
      await first.page.getByTestId('new-chat').click();
      await first.page.getByTestId('model-select').filter({ hasText: 'a-model' }).waitFor();
      await first.page.getByTestId('model-select').click();
      await first.page.getByRole('option', { name: 'z-model' }).click();
      await first.page.getByTestId('model-select').filter({ hasText: 'z-model' }).waitFor();
      fake.enqueue({ content: 'Answer from z.' });
      await first.page.getByTestId('composer-input').fill('hello');
      await first.page.getByTestId('composer-input').press('Enter');
      await first.page.getByTestId('assistant-text').filter({ hasText: 'Answer from z.' }).waitFor();
      assert.equal(fake.completions.at(-1).body.model, 'z-model');
      assert.equal(fake.completions.at(-1).headers.authorization, undefined);
    } finally {
      await first.context.close();
    }

    // a new context has an empty localStorage: the server's last model is preselected, not the first one
    const fresh = await openPage();
    try {
      await fresh.page.goto(api.url);
      await fresh.page.getByTestId('new-chat').click();
      await fresh.page.getByTestId('model-select').filter({ hasText: 'z-model' }).waitFor();
      await screenshot(fresh.page, 'local-models-02-fresh-browser');
      assert.deepEqual(pageErrors, []);
    } finally {
      await fresh.context.close();
    }
  });
});
