// Browser e2e of the first start (openspec/specs/console/spec.md "Requirement: Sign-in screen", openspec
// http-platform "Requirement: A credential even on loopback"): a fresh server prints a one-time sign-in link; a browser
// without the session cookie sees the sign-in screen; opening the printed link signs it in, chat works, a reload and
// a restart keep it signed in; the used link fails with a page that says what to do; pasting the API token works too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, connected, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Sign-in on the first start', { timeout: 240_000 }, () => {
  let api;
  let fake;
  let browser;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-sign-in' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    // no automatic sign-in: this file is about the sign-in itself
    browser = await launchBrowser({ signIn: false });
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function freshPage() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return { context, page };
  }

  test('Scenario: a fresh server signs the console in with the printed link', async () => {
    const link = api.signInUrl;
    assert.match(link, new RegExp(`^${api.url}/api/auth/login\\?code=[A-Za-z0-9_-]{43}$`));
    const { context, page } = await freshPage();
    try {
      // without the cookie: the sign-in screen, which says what to do
      await page.goto(api.url);
      const screen = page.getByTestId('sign-in-screen');
      await screen.waitFor();
      assert.match(await screen.innerText(), /This console is not signed in/);
      assert.match(await screen.innerText(), /Open the link the server printed when it started/);
      await screenshot(page, 'sign-in-01-not-signed-in');

      // the printed link: the cookie is set (HttpOnly, SameSite=Strict) and the console opens
      await page.goto(link);
      assert.equal(new URL(page.url()).pathname, '/');
      const cookies = await context.cookies(api.url);
      const session = cookies.find((cookie) => cookie.name === `cashcode_session_${api.httpPort}`);
      assert.ok(session, `no session cookie in ${JSON.stringify(cookies)}`);
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');
      assert.equal(await page.evaluate(() => document.cookie), '', 'the page cannot read the session cookie');
      await connected(page).waitFor();
      assert.equal(await page.getByTestId('sign-in-screen').count(), 0);

      // chat works over the gateway on its own port (the cookie is sent there too)
      fake.enqueue({ content: 'Signed in and answering.' });
      await page.getByTestId('new-chat').click();
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      await typeAndSend(page, 'Hello after signing in');
      await page.getByTestId('assistant-text').filter({ hasText: 'Signed in and answering.' }).waitFor();
      await screenshot(page, 'sign-in-02-signed-in-chat');

      // a reload keeps working
      await page.reload();
      await connected(page).waitFor();
      await page.getByTestId('assistant-text').filter({ hasText: 'Signed in and answering.' }).waitFor();
      assert.equal(await page.getByTestId('sign-in-screen').count(), 0);

      // the link worked once: another browser gets a page that says what to do
      const other = await freshPage();
      try {
        const response = await other.page.goto(link);
        assert.equal(response.status(), 401);
        assert.match(await other.page.locator('body').innerText(), /This sign-in link was already used/);
        assert.match(await other.page.locator('body').innerText(), /Restart the server and open the new link it prints/);
        await screenshot(other.page, 'sign-in-03-link-used');
      } finally {
        await other.context.close();
      }

      // a restart prints a new link; the signed-in browser stays signed in
      await api.stop({ keepData: true });
      api = await startApi(api);
      assert.notEqual(api.signInUrl, link);
      await page.reload();
      await connected(page).waitFor();
      assert.equal(await page.getByTestId('sign-in-screen').count(), 0);
    } finally {
      await context.close();
    }
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: the sign-in screen accepts the pasted API token', async () => {
    const { context, page } = await freshPage();
    try {
      await page.goto(api.url);
      await page.getByTestId('sign-in-screen').waitFor();
      await page.getByTestId('sign-in-token').fill('not-the-token-0123456789');
      await page.getByTestId('sign-in-submit').click();
      await page.getByTestId('sign-in-error').waitFor();
      assert.match(await page.getByTestId('sign-in-error').innerText(), /The server did not accept this token/);

      await page.getByTestId('sign-in-token').fill(api.token);
      await page.getByTestId('sign-in-submit').click();
      await connected(page).waitFor();
      assert.equal(await page.getByTestId('sign-in-screen').count(), 0);
      await page.getByTestId('new-chat').waitFor();
    } finally {
      await context.close();
    }
  });
});
