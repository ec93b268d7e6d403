/* global fetch */
// Browser e2e of the MCP OAuth sign-in (openspec/specs/mcp/spec.md "Requirement: OAuth sign-in"): the built API, a
// local OAuth-protected MCP server (support/oauth-mcp-server.mjs, auto-approving), Debian Chromium through
// playwright-core. The Sign in button opens the authorization page in a new tab, which comes back to the API's
// callback; the Market then shows the server connected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';
import { startOAuthMcpServer } from './support/oauth-mcp-server.mjs';

const TIMEOUT = 20_000;

describe('MCP OAuth sign-in', { timeout: 180_000 }, () => {
  let api;
  let oauthServer;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    oauthServer = await startOAuthMcpServer();
    api = await startApi();
    const created = await fetch(`${api.url}/api/mcp/servers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'oauth_http', type: 'streamable_http', display_name: 'OAuth HTTP', url: oauthServer.url }),
    });
    assert.equal(created.status, 201);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await oauthServer?.stop();
  });

  test('Scenario: the Sign in button opens the flow and the server ends connected', async () => {
    await page.goto(`${api.url}/mcp`);
    const row = page.getByTestId('mcp-row-oauth_http');
    await row.waitFor();
    await row.getByTestId('mcp-lifecycle').click();
    await page.locator('[data-testid="mcp-row-oauth_http"][data-status="needs_auth"]').waitFor();
    assert.match(await row.innerText(), /Sign-in required/);
    const popup = page.waitForEvent('popup');
    await row.getByTestId('mcp-sign-in').click();
    const tab = await popup;
    await tab.waitForLoadState();
    await tab.getByText('return to the CashCode console').waitFor();
    await screenshot(tab, 'mcp-oauth-callback');
    await tab.close();
    await page.locator('[data-testid="mcp-row-oauth_http"][data-status="connected"]').waitFor();
    assert.match(await row.innerText(), /1 tool/);
    await screenshot(page, 'mcp-oauth-connected');
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: Sign out in the MCP Market deletes the sign-in', async () => {
    const row = page.getByTestId('mcp-row-oauth_http');
    await row.getByTestId('mcp-more').click();
    await page.getByTestId('mcp-sign-out').click();
    await page.locator('[data-testid="mcp-row-oauth_http"][data-status="disconnected"]').waitFor();
    await row.getByTestId('mcp-lifecycle').click();
    await page.locator('[data-testid="mcp-row-oauth_http"][data-status="needs_auth"]').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
