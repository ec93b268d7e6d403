// Browser e2e of the unsaved-edits guard (openspec/specs/console/spec.md "Requirement: Unsaved edits are guarded"):
// the built API serving the built console, Debian Chromium through playwright-core.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Unsaved edits', { timeout: 180_000 }, () => {
  let api;
  let browser;
  let page;
  const pageErrors = [];
  const memoryFile = () => join(api.dir, 'data', 'memory', 'MEMORY.md');

  before(async () => {
    assertBuilt();
    process.env.DREAM_INTERVAL = '0';
    api = await startApi();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    delete process.env.DREAM_INTERVAL;
    await browser?.close();
    await api?.stop();
  });

  test('Scenario: leaving the Memory view with an unsaved MEMORY.md asks first', async () => {
    await page.goto(api.url);
    await page.getByTestId('nav-memory').click();
    await page.waitForURL(/\/memory$/);
    const editor = page.getByTestId('memory-editor');
    await editor.getByTestId('editor-text').fill('# Draft that is not saved\n');

    await page.getByTestId('nav-evolution').click();
    const dialog = page.getByRole('dialog').filter({ hasText: 'Leave without saving?' });
    await dialog.waitFor();
    await screenshot(page, 'unsaved-01-memory-confirm');
    await dialog.getByRole('button', { name: 'Stay' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(page.url(), /\/memory$/);
    assert.equal(await editor.getByTestId('editor-text').inputValue(), '# Draft that is not saved\n');

    await page.getByTestId('nav-evolution').click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL(/\/evolution$/);
    // nothing was written behind the user's back
    assert.ok(!existsSync(memoryFile()) || !readFileSync(memoryFile(), 'utf8').includes('Draft that is not saved'));
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: a saved MEMORY.md leaves without a question', async () => {
    await page.getByTestId('nav-memory').click();
    await page.waitForURL(/\/memory$/);
    const editor = page.getByTestId('memory-editor');
    await editor.getByTestId('editor-text').fill('# Saved facts\n');
    await editor.getByTestId('editor-save').click();
    await editor.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    await page.getByTestId('nav-evolution').click();
    await page.waitForURL(/\/evolution$/);
    assert.equal(await page.getByRole('dialog').count(), 0);
  });

  test('Scenario: reloading with an unsaved SOUL.md gets the browser prompt', async () => {
    await page.getByTestId('nav-memory').click();
    await page.waitForURL(/\/memory$/);
    await page.getByRole('tab', { name: /Persona/ }).click();
    const soul = page.getByTestId('soul-editor');
    await soul.getByTestId('editor-text').click();
    await soul.getByTestId('editor-text').fill('A draft soul\n');
    const prompted = new Promise((resolveDialog) => {
      page.once('dialog', async (dialog) => {
        resolveDialog(dialog.type());
        await dialog.dismiss();
      });
    });
    await page.close({ runBeforeUnload: true });
    assert.equal(await prompted, 'beforeunload');
    assert.ok(!page.isClosed(), 'dismissing the prompt keeps the page');
    await screenshot(page, 'unsaved-02-soul-kept');
  });
});
