// Browser e2e of the approval card's exact text (openspec/specs/approvals/spec.md "Requirement: The owner sees exactly
// what runs"): the built API serving the built console, the fake model scripted to call `exec` with a line a redactor
// once cut down to a harmless echo; the card must show every byte and mark each of the three commands it runs.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('The approval card shows exactly what runs', { timeout: 120_000 }, () => {
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
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-exact' }, ollama: { base_url: '' } }),
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

  test('Scenario: the card shows a multi-command line in full and marks every command it runs', async () => {
    const line = `echo "password='" ; id > HIDDEN_RAN.txt ; echo "'"`;
    fake.enqueue({ toolCalls: [{ name: 'exec', arguments: JSON.stringify({ command: line }) }] }, { content: 'I did not run it.' });
    await page.goto(api.url);
    await typeAndSend(page, 'print something');
    const card = page.locator('cc-approval-card[data-state="pending"]');
    await card.waitFor();
    const box = card.getByTestId('approval-arguments');
    assert.equal(await box.textContent(), line);
    assert.deepEqual(await card.getByTestId('approval-command-part').allTextContents(), [`echo "password='"`, 'id > HIDDEN_RAN.txt', `echo "'"`]);
    assert.match(await card.getByTestId('approval-commands').textContent(), /3 separate commands: echo, id, echo/);
    await screenshot(page, 'approval-exact-multi-command');
    await card.getByTestId('approval-deny').click();
    await page.locator('cc-approval-card[data-outcome="deniedByUser"]').waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'I did not run it.' }).waitFor();
    assert.equal(existsSync(join(api.dir, 'data', 'workspace', 'HIDDEN_RAN.txt')), false);
    assert.deepEqual(pageErrors, []);
  });
});
