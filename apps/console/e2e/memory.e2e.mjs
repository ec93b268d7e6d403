// Browser e2e of the Memory view (openspec/specs/memory/spec.md): the built API serving the built console, the fake
// model server as the only model, Debian Chromium through playwright-core. MEMORY.md editing with a save conflict,
// the background model picker, Dream "Run now" with its diff, and Revert.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Memory view', { timeout: 180_000 }, () => {
  let fake;
  let api;
  let browser;
  let page;
  const pageErrors = [];
  const memoryFile = () => join(api.dir, 'data', 'memory', 'MEMORY.md');
  const readMemory = () => readFileSync(memoryFile(), 'utf8');

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    // the harness passes this process's environment to the API: no scheduled Dream during the test
    process.env.DREAM_INTERVAL = '0';
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-memory-key' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    delete process.env.DREAM_INTERVAL;
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  test('Scenario: MEMORY.md is edited and saved from the Memory view', async () => {
    await page.goto(api.url);
    await page.getByTestId('nav-memory').click();
    await page.waitForURL(/\/memory$/);
    const editor = page.getByTestId('memory-editor');
    await editor.getByTestId('editor-text').fill('# Preferences\n- The user prefers green tea\n');
    await editor.getByTestId('editor-save').click();
    await editor.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    assert.equal(readMemory(), '# Preferences\n- The user prefers green tea\n');
    await screenshot(page, 'memory-01-editor');
  });

  test('Scenario: a save after a change made elsewhere shows the conflict; overwrite keeps my version', async () => {
    const editor = page.getByTestId('memory-editor');
    await editor.getByTestId('editor-text').fill('# Preferences\n- mine\n');
    // another writer changes the file behind the page's back
    const current = await (await fetch(`${api.url}/api/memory`)).json();
    const other = await fetch(`${api.url}/api/memory`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: '# Preferences\n- theirs\n', hash: current.hash }),
    });
    assert.equal(other.status, 200);
    await editor.getByTestId('editor-save').click();
    await editor.getByTestId('conflict-banner').waitFor();
    assert.equal(readMemory(), '# Preferences\n- theirs\n', 'nothing was overwritten silently');
    await screenshot(page, 'memory-02-conflict');
    await editor.getByTestId('conflict-overwrite').click();
    await editor.getByTestId('conflict-banner').waitFor({ state: 'detached' });
    await editor.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    assert.equal(readMemory(), '# Preferences\n- mine\n');
  });

  test('Scenario: Run now distils a conversation with the chosen background model, shows the diff, and Revert undoes it', async () => {
    // a conversation on disk (no turn has run, so Dream needs the background model)
    const chatDir = join(api.dir, 'data', 'memory', 'e2e-chat');
    mkdirSync(chatDir, { recursive: true });
    writeFileSync(
      join(chatDir, 'history.jsonl'),
      '{"cursor": 1, "timestamp": "2026-07-26 10:00", "role": "user", "content": "I moved to Lisbon"}\n' +
        '{"cursor": 2, "timestamp": "2026-07-26 10:00", "role": "assistant", "content": "Noted."}\n',
    );
    await page.getByRole('tab', { name: 'Dream history' }).click();
    await page.getByTestId('dream-empty').waitFor();

    await page.getByTestId('background-model-select').click();
    await page.getByRole('option', { name: /fake-model/ }).click();
    await page.getByTestId('background-model-message').filter({ hasText: 'Background model saved.' }).waitFor();
    const settings = await (await fetch(`${api.url}/api/settings/llm`)).json();
    assert.deepEqual(settings.background, { provider: 'openai_compatible', model: 'fake-model' });

    fake.enqueue({ content: '## New facts\n- lives in Lisbon' }, { content: '# Preferences\n- mine\n- The user lives in Lisbon' });
    await page.getByTestId('dream-run-now').click();
    await page.getByTestId('dream-message').filter({ hasText: 'Dream finished: Updated.' }).waitFor();
    assert.equal(readMemory(), '# Preferences\n- mine\n- The user lives in Lisbon\n');
    const runRow = page.getByTestId('dream-run').first();
    await runRow.getByTestId('dream-outcome').filter({ hasText: 'Updated' }).waitFor();
    await runRow.getByTestId('dream-diff-toggle').click();
    await runRow.getByTestId('diff-view').filter({ hasText: 'The user lives in Lisbon' }).waitFor();
    await screenshot(page, 'memory-03-dream-diff');

    await runRow.getByTestId('dream-revert').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revert' }).click();
    await page.getByTestId('dream-message').filter({ hasText: 'MEMORY.md was restored.' }).waitFor();
    assert.equal(readMemory(), '# Preferences\n- mine\n');
    await page.getByTestId('dream-run').first().getByTestId('dream-outcome').filter({ hasText: 'Reverted' }).waitFor();
    assert.equal(await page.getByTestId('dream-run').count(), 2);

    // the editor shows the restored text
    await page.getByRole('tab', { name: 'Long-term memory' }).click();
    assert.equal(await page.getByTestId('memory-editor').getByTestId('editor-text').inputValue(), '# Preferences\n- mine\n');
  });

  test('Scenario: the LLM settings view offers the background model picker', async () => {
    await page.goto(`${api.url}/settings/llm`);
    await page.getByTestId('background-model-select').filter({ hasText: 'fake-model' }).waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
