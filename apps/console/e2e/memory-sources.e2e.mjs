// Browser e2e of the Memory view's Sources tab (openspec/specs/memory/spec.md "Requirement: Memory view in the
// console"): each entry of MEMORY.md with its source from the provenance log, Mark verified, paging through 10,000
// entries, the Trusted sources control, and applying a Dream run held for review.
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

  const rest = async (path, init = {}) => {
    const response = await fetch(`${api.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(api.token ? { authorization: `Bearer ${api.token}` } : {}) },
    });
    assert.equal(response.status, 200, `${path} → ${response.status}`);
    return response.json();
  };

  test('Scenario: the Memory page pages through 10,000 entries and shows hand-edited lines as of unknown source', async () => {
    const lines = ['[2026-07-26 10:00] Prefers green tea', ...Array.from({ length: 9_999 }, (_, i) => `- hand-written fact ${i + 2}`)];
    writeFileSync(join(memoryDir(), 'MEMORY.md'), `${lines.join('\n')}\n`);
    await page.goto(`${api.url}/memory`);
    await page.getByRole('tab', { name: 'Sources' }).click();
    const rows = page.getByTestId('memory-source-row');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 100);
    assert.equal(await rows.first().getAttribute('data-trust'), 'trusted');
    assert.equal(await rows.nth(1).getAttribute('data-trust'), 'unknown');
    assert.equal((await rows.nth(1).getByTestId('memory-source-origin').textContent())?.trim(), 'Unknown source');
    assert.match((await page.getByTestId('memory-sources-counts').textContent()) ?? '', /10000 entries: 0 verified, 1 .*, 0 from untrusted content, 9999 of unknown source/);
    await page.getByTestId('memory-sources-next').click();
    await page.locator('[data-testid="memory-source-row"][data-line="101"]').waitFor();
    assert.equal(await rows.count(), 100);
    assert.equal(await rows.last().getAttribute('data-line'), '200');
    assert.match(await page.getByText('Page 2 of 100').textContent(), /Page 2 of 100/);
    await screenshot(page, 'memory-sources-02-paging');
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: the owner trusts a source from the Memory page and the change is audited', async () => {
    await page.goto(`${api.url}/memory`);
    await page.getByRole('tab', { name: 'Sources' }).click();
    const control = page.getByTestId('trusted-sources');
    await control.waitFor();
    await control.getByTestId('trusted-source-kind').selectOption('mcp_server');
    await control.getByTestId('trusted-source-name').fill('my-notes');
    await control.getByTestId('trusted-source-add').click();
    await control.getByTestId('trusted-source-row').filter({ hasText: 'my-notes' }).waitFor();
    assert.deepEqual(await rest('/api/settings/trusted-sources'), { sources: [{ kind: 'mcp_server', name: 'my-notes' }] });
    // a name the server refuses is shown, and nothing is stored
    await control.getByTestId('trusted-source-kind').selectOption('domain');
    await control.getByTestId('trusted-source-name').fill('not a domain');
    await control.getByTestId('trusted-source-add').click();
    await control.getByTestId('trusted-source-error').waitFor();
    await screenshot(page, 'memory-sources-03-trusted');
    await control.getByTestId('trusted-source-row').filter({ hasText: 'my-notes' }).getByTestId('trusted-source-remove').click();
    await control.getByTestId('trusted-source-row').first().waitFor({ state: 'detached' });
    assert.deepEqual(await rest('/api/settings/trusted-sources'), { sources: [] });
    const audit = await rest('/api/approvals/audit?limit=10');
    assert.deepEqual(
      audit.entries.filter((entry) => entry.tool === 'trusted_sources').map((entry) => entry.trusted_source),
      [
        { action: 'untrust', kind: 'mcp_server', name: 'my-notes' },
        { action: 'trust', kind: 'mcp_server', name: 'my-notes' },
      ],
    );
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: a held Dream run is applied from the Memory page', async () => {
    const before = '- [2026-07-26 10:00] Lives in Berlin\n- Prefers green tea\n';
    const proposal = '- Lives in Paris\n- Prefers green tea\n';
    const id = '1785052800000-0000abcd';
    writeFileSync(join(memoryDir(), 'MEMORY.md'), before);
    const dreams = join(memoryDir(), '.dreams');
    mkdirSync(join(dreams, 'snapshots'), { recursive: true });
    mkdirSync(join(dreams, 'proposals'), { recursive: true });
    writeFileSync(join(dreams, 'snapshots', `${id}.md`), before);
    writeFileSync(join(dreams, 'proposals', `${id}.md`), proposal);
    const run = {
      id,
      trigger: 'schedule',
      started_at: '2026-07-26T08:00:00.000Z',
      finished_at: '2026-07-26T08:00:03.000Z',
      outcome: 'held',
      detail: 'the rewrite would drop or change 1 verified entry; held for review, MEMORY.md was not changed',
      model: { provider: 'openai_compatible', model: 'fake-model' },
      model_source: 'last_turn',
      records_read: 2,
      cursors: {},
      entries_before: 2,
      entries_after: 2,
      diff: '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,2 +1,2 @@\n-- [2026-07-26 10:00] Lives in Berlin\n+- Lives in Paris\n - Prefers green tea\n',
      revertible: false,
      verified_dropped: ['- [2026-07-26 10:00] Lives in Berlin'],
      provenance: [
        { entry: '- [2026-07-26 10:00] Lives in Berlin', change: 'removed', trust: 'verified', untrusted_sources: [] },
        { entry: '- Lives in Paris', change: 'added', trust: 'trusted', untrusted_sources: [] },
      ],
    };
    writeFileSync(join(dreams, 'runs.jsonl'), `${JSON.stringify(run)}\n`);
    await page.goto(`${api.url}/memory`);
    await page.getByRole('tab', { name: 'Dream history' }).click();
    const held = page.locator(`[data-run-id="${id}"]`);
    await held.getByTestId('dream-outcome').filter({ hasText: 'Held for review' }).waitFor();
    await held.getByTestId('dream-diff-toggle').click();
    const provenance = held.getByTestId('dream-provenance');
    await provenance.waitFor();
    assert.match((await provenance.textContent()) ?? '', /Removed\s*Verified\s*- \[2026-07-26 10:00\] Lives in Berlin/);
    await screenshot(page, 'memory-sources-04-held');
    await held.getByTestId('dream-apply').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Apply proposal' }).click();
    await page.getByTestId('dream-run').first().getByText('Applied proposal').waitFor();
    assert.equal(readFileSync(join(memoryDir(), 'MEMORY.md'), 'utf8'), proposal);
    assert.deepEqual(pageErrors, []);
  });
});
