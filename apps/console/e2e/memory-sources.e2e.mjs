// Browser e2e of the Memory view's Sources tab (openspec/specs/memory/spec.md "Requirement: Memory view in the
// console"): each entry of MEMORY.md with its source from the provenance log, and Mark verified.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const PAGE_URL = 'https://evil.test/recipe';

describe('Memory sources', { timeout: 120_000 }, () => {
  let api;
  let browser;
  let page;
  const pageErrors = [];
  const memoryDir = () => join(api.dir, 'data', 'memory');

  before(async () => {
    assertBuilt();
    process.env.DREAM_INTERVAL = '0';
    api = await startApi();
    mkdirSync(memoryDir(), { recursive: true });
    writeFileSync(join(memoryDir(), 'MEMORY.md'), '[2026-07-26 10:00] Prefers green tea\n[2026-07-26 10:05] Pay account 123\n- edited by hand\n');
    const record = (entry, sources) =>
      JSON.stringify({ at: '2026-07-26T10:00:00.000+02:00', origin: 'save_memory', requested_by: 'owner', entry, chat_id: 'chat-1', untrusted_sources: sources });
    writeFileSync(
      join(memoryDir(), 'MEMORY.provenance.jsonl'),
      `${record('[2026-07-26 10:00] Prefers green tea', [])}\n${record('[2026-07-26 10:05] Pay account 123', [{ kind: 'web_fetch', name: PAGE_URL }])}\n`,
      { mode: 0o600 },
    );
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
  });

  test('Scenario: the Memory page shows each entry with its source; a hand-edited line is of unknown source', async () => {
    await page.goto(`${api.url}/memory`);
    await page.getByRole('tab', { name: 'Sources' }).click();
    const rows = page.getByTestId('memory-source-row');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 3);
    assert.deepEqual(
      await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-trust'))),
      ['trusted', 'untrusted', 'unknown'],
    );
    const untrusted = rows.nth(1);
    assert.equal((await untrusted.getByTestId('memory-source-untrusted').textContent())?.trim(), `web_fetch: ${PAGE_URL}`);
    assert.match((await untrusted.getByTestId('memory-source-origin').textContent()) ?? '', /Saved by the agent · chat-1/);
    assert.equal(await rows.nth(0).getByTestId('memory-source-verify').count(), 0);
    await screenshot(page, 'memory-sources-01');

    await untrusted.getByTestId('memory-source-verify').click();
    await page.locator('[data-testid="memory-source-row"][data-trust="verified"]').waitFor();
    const log = readFileSync(join(memoryDir(), 'MEMORY.provenance.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(
      { entry: log.at(-1).entry, verified: log.at(-1).verified, origin: log.at(-1).origin },
      { entry: '[2026-07-26 10:05] Pay account 123', verified: true, origin: 'console' },
    );
    assert.deepEqual(pageErrors, []);
  });
});
