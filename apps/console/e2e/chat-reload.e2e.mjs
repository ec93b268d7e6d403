// Browser e2e of what a reload keeps (openspec/specs/console/spec.md, openspec/specs/sessions/spec.md): the built API
// serving the built console, Debian Chromium through playwright-core. A server in UTC and a browser in Asia/Shanghai
// agree on a chat's age.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Chat reload', { timeout: 180_000 }, () => {
  let api;
  let browser;
  const pageErrors = [];
  const previousTz = process.env.TZ;

  before(async () => {
    assertBuilt();
    // the harness passes this process's environment to the API: the server runs in UTC
    process.env.TZ = 'UTC';
    api = await startApi();
    browser = await launchBrowser();
  });

  after(async () => {
    if (previousTz === undefined) delete process.env.TZ;
    else process.env.TZ = previousTz;
    await browser?.close();
    await api?.stop();
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
