// Browser e2e of Settings > Data (openspec console "Requirement: Download a backup"; openspec backup): the built API
// serving the built console, Debian Chromium through playwright-core. The user downloads a backup without secrets,
// then ticks "Include secrets", sees the warning and downloads one with them; each archive is read back (its
// manifest and the LLM settings in it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import yauzl from 'yauzl';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { artifactsDir, assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const KEY = 'sk-e2e-backup-key-0123456789';

/** member name → text, of every member of a ZIP file */
function readZip(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const members = new Map();
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks = [];
          stream.on('data', (chunk) => chunks.push(chunk));
          stream.on('end', () => {
            members.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(members));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('Backup download in the console', { timeout: 300_000 }, () => {
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
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: KEY }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    const memory = await (await fetch(`${api.url}/api/memory`)).json();
    const put = await fetch(`${api.url}/api/memory`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: '# Facts\n- keeps backups\n', hash: memory.hash }),
    });
    assert.equal(put.status, 200);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function downloadBackup(name) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('backup-download').click()]);
    assert.match(download.suggestedFilename(), /^cashcode-backup-\d{8}-\d{6}\.zip$/);
    const file = join(artifactsDir, name);
    await download.saveAs(file);
    const members = await readZip(file);
    return { members, manifest: JSON.parse(members.get('manifest.json')) };
  }

  test('Scenario: the console downloads a backup, with secrets only when asked and a warning then', async () => {
    await page.goto(`${api.url}/`);
    await page.getByTestId('nav-data').click();
    await page.getByTestId('backup-download').waitFor();
    assert.equal(await page.getByTestId('backup-secrets-warning').count(), 0);

    const plain = await downloadBackup('backup-plain.zip');
    assert.equal(plain.manifest.secrets, false);
    assert.equal(plain.members.get('memory/MEMORY.md'), '# Facts\n- keeps backups\n');
    assert.ok(plain.members.get('config/settings/llm.json').includes(fake.baseUrl));
    assert.ok(!plain.members.get('config/settings/llm.json').includes(KEY));
    await page.getByTestId('backup-done').waitFor();
    assert.match(await page.getByTestId('backup-done').textContent(), /without secrets/);

    await page.getByTestId('backup-secrets').locator('input').check();
    await page.getByTestId('backup-secrets-warning').waitFor();
    assert.match(await page.getByTestId('backup-secrets-warning').textContent(), /API keys and credentials/);
    await screenshot(page, 'backup-secrets-warning');
    const full = await downloadBackup('backup-secrets.zip');
    assert.equal(full.manifest.secrets, true);
    assert.ok(full.members.get('config/settings/llm.json').includes(KEY));
    assert.ok(full.members.has('config/settings/api-token'));
    await page.waitForFunction(() => /WITH secrets/.test(document.querySelector('[data-testid="backup-done"]')?.textContent ?? ''));
    assert.ok(readFileSync(join(artifactsDir, 'backup-secrets.zip')).length > 0);
    assert.deepEqual(pageErrors, []);
  });
});
