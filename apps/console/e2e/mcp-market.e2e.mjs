// Browser e2e of the MCP Market (openspec/specs/mcp/spec.md, console part; the tools dialog's annotations:
// openspec/specs/console/spec.md "MCP Market tools dialog"): the built API with the repo's built-in catalog, the repo's
// SSE test server (with its test tools: `say_hello` is read-only and idempotent, `fail` destructive) as a user server,
// Debian Chromium through playwright-core.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, eventually, launchBrowser, repoRoot, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const SECRET = 'browser-e2e-header-secret';
const SSE_SERVER = join(repoRoot, 'mcp_servers', 'test_sse_mcp', 'dist', 'index.js');
const EVERYTHING_JS = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const ENV_SECRET = 'browser-e2e-env-secret';

/** The repo's SSE test server on a free port, requiring the secret header, with its test tools. */
async function startSseServer() {
  const child = spawn(process.execPath, [SSE_SERVER, '--port', '0', '--require-header', `X-Api-Key=${SECRET}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CASHCODE_MCP_TEST_TOOLS: '1' },
  });
  const url = await new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk.toString();
      const match = /listening on (\S+)/.exec(text);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`SSE test server exited with ${code}: ${text}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('MCP Market', { timeout: 180_000 }, () => {
  let api;
  let sse;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    if (!existsSync(SSE_SERVER)) throw new Error('build the MCP test servers first (npm run build:mcp)');
    sse = await startSseServer();
    api = await startApi();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await sse?.stop();
  });

  const row = (name) => page.getByTestId(`mcp-row-${name}`);

  test('Scenario: the built-in servers are listed with badges, status and tool counts', async () => {
    await page.goto(`${api.url}/mcp`);
    await row('test_stdio_mcp').waitFor();
    await row('test_sse_mcp').waitFor();
    assert.match(await row('test_stdio_mcp').innerText(), /Built-in/);
    assert.match(await row('test_stdio_mcp').innerText(), /Not connected/);
    assert.match(await row('test_stdio_mcp').innerText(), /test_stdio_mcp · STDIO · 0 tools/);
    assert.equal(await row('test_stdio_mcp').getByTestId('mcp-more').count(), 0);
  });

  test('Scenario: connecting a built-in stdio server shows connected with its tools', async () => {
    await row('test_stdio_mcp').getByTestId('mcp-lifecycle').click();
    await row('test_stdio_mcp').locator('[data-testid="mcp-status"][data-status="connected"]').waitFor();
    assert.match(await row('test_stdio_mcp').innerText(), /· 1 tool$/m);
    assert.match(await row('test_stdio_mcp').getByTestId('mcp-lifecycle').innerText(), /Disconnect/);
  });

  test('Scenario: the form validates inline, then shows the API message (name taken)', async () => {
    await page.getByTestId('mcp-create').click();
    await page.getByTestId('mcp-form-name').fill('Bad Name');
    await page.getByTestId('mcp-form-save').click();
    await page.getByText('Use lowercase letters, digits, underscores or hyphens').waitFor();
    await page.getByText('Enter a complete HTTP(S) URL').or(page.getByText('The URL is required')).first().waitFor();
    await page.getByTestId('mcp-form-name').fill('test_sse_mcp');
    await page.getByTestId('mcp-form-display-name').fill('Remote hello');
    await page.getByTestId('mcp-form-url').fill(sse.url);
    await page.getByTestId('mcp-form-save').click();
    // the API's 409 lands at the name field
    await page.getByText('MCP server already exists: test_sse_mcp').waitFor();
    await screenshot(page, 'mcp-01-form-error');
  });

  test('Scenario: add a user SSE server with a secret header', async () => {
    await page.getByTestId('mcp-form-name').fill('remote_hello');
    await page.getByTestId('mcp-add-header').click();
    await page.getByTestId('mcp-header-name').fill('X-Api-Key');
    await page.getByTestId('mcp-header-value').fill(SECRET);
    await page.getByTestId('mcp-form-save').click();
    await row('remote_hello').waitFor();
    assert.match(await row('remote_hello').innerText(), /Remote hello/);
    assert.match(await row('remote_hello').innerText(), /remote_hello · SSE · 0 tools/);
  });

  test('Scenario: connect it and see its live tools with schemas', async () => {
    await row('remote_hello').getByTestId('mcp-lifecycle').click();
    await row('remote_hello').locator('[data-testid="mcp-status"][data-status="connected"]').waitFor();
    await row('remote_hello').getByTestId('mcp-tools').click();
    await page.getByTestId('mcp-tools-source').filter({ hasText: 'Live tools' }).waitFor();
    const tool = page.getByTestId('mcp-tool').filter({ hasText: 'mcp_remote_hello_say_hello' });
    await tool.waitFor();
    assert.match(await tool.innerText(), /Say hello to Cash\./);
    await screenshot(page, 'mcp-02-tools');
    await page.getByTestId('mcp-tools-close').click();
  });

  const toolItem = (name) => page.locator(`[data-testid="mcp-tool"][data-tool="${name}"]`);
  const badgeTexts = async (name) => (await toolItem(name).getByTestId('mcp-tool-badge').allInnerTexts()).map((text) => text.trim());

  async function toggleTheme(dark) {
    await page.getByTestId('theme-toggle').click();
    await page.waitForFunction((wanted) => document.documentElement.classList.contains('cc-dark') === wanted, dark);
  }

  async function setLanguage(label) {
    await page.getByTestId('language-button').click();
    await page.getByRole('menuitem', { name: label }).click();
  }

  test('Scenario: the tools dialog shows titles, annotation badges and the approval of each tool', async () => {
    // the user's own policy for `fail` shows instead of the default
    const put = await fetch(`${api.url}/api/settings/tool-policies`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tools: { 'remote_hello/fail': 'deny' } }),
    });
    assert.equal(put.ok, true);
    await row('remote_hello').getByTestId('mcp-tools').click();
    await toolItem('fail').waitFor();
    const hello = toolItem('say_hello');
    assert.equal(await hello.getByTestId('mcp-tool-title').innerText(), 'Say hello');
    assert.deepEqual(await badgeTexts('say_hello'), ['Read-only', 'Idempotent']);
    assert.equal(await page.getByRole('list', { name: 'Hints declared by the server' }).first().isVisible(), true);
    assert.equal(await hello.getByTestId('mcp-tool-approval').innerText(), 'Runs without asking');
    // fail: destructiveHint true, openWorldHint false (no badge); the stored deny policy wins
    assert.deepEqual(await badgeTexts('fail'), ['Destructive']);
    assert.equal(await toolItem('fail').getByTestId('mcp-tool-approval').innerText(), 'Blocked by your tool policy');
    // a tool without annotations asks by default (MCP tools not read-only)
    assert.equal(await toolItem('shout').getByTestId('mcp-tool-badges').count(), 0);
    assert.equal(await toolItem('shout').getByTestId('mcp-tool-approval').innerText(), 'Asks before running');
    // a taller window, so that the shot holds every tool
    await page.setViewportSize({ width: 1280, height: 1400 });
    await screenshot(page, 'mcp-04-tool-annotations');
    await page.getByTestId('mcp-tools-close').click();

    // Chinese, dark theme
    await setLanguage('简体中文');
    await toggleTheme(true);
    await row('remote_hello').getByTestId('mcp-tools').click();
    await toolItem('fail').waitFor();
    assert.deepEqual(await badgeTexts('say_hello'), ['只读', '幂等']);
    assert.deepEqual(await badgeTexts('fail'), ['破坏性']);
    assert.equal(await toolItem('shout').getByTestId('mcp-tool-approval').innerText(), '运行前询问');
    await screenshot(page, 'mcp-05-tool-annotations-dark-zh');
    await page.setViewportSize({ width: 1280, height: 820 });
    await page.getByTestId('mcp-tools-close').click();
    await toggleTheme(false);
    await setLanguage('English');

    // the link leads to Settings → Tools & approvals and closes the dialog
    await row('remote_hello').getByTestId('mcp-tools').click();
    await page.getByTestId('mcp-tools-policy-link').click();
    await page.waitForURL(/\/settings\/tools$/);
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.locator('[data-testid="tools-tool-row"][data-tool="remote_hello/fail"]').waitFor();
    await page.goto(`${api.url}/mcp`);
    await row('remote_hello').waitFor();
  });

  test('Scenario: editing shows the header masked and keeps the secret', async () => {
    await row('remote_hello').getByTestId('mcp-more').click();
    await page.getByTestId('mcp-edit').click();
    // the edit form's name field is locked (waited for: a loaded machine may be a frame behind the click)
    await page.locator('[data-testid="mcp-form-name"]:disabled').waitFor();
    await eventually(async () => assert.equal(await page.getByTestId('mcp-header-value').inputValue(), '********'));
    await page.getByTestId('mcp-form-display-name').fill('Remote hello (edited)');
    await page.getByTestId('mcp-form-save').click();
    await row('remote_hello').filter({ hasText: 'Remote hello (edited)' }).waitFor();
    // an update disconnects; connecting again works with the kept secret
    await row('remote_hello').getByTestId('mcp-lifecycle').click();
    await row('remote_hello').locator('[data-testid="mcp-status"][data-status="connected"]').waitFor();
    const html = await page.content();
    assert.equal(html.includes(SECRET), false);
  });

  test('Scenario: a failed connection shows the error and offers a retry', async () => {
    await sse.stop();
    await row('remote_hello').getByTestId('mcp-lifecycle').click(); // disconnect
    await row('remote_hello').locator('[data-testid="mcp-status"][data-status="disconnected"]').waitFor();
    await row('remote_hello').getByTestId('mcp-lifecycle').click(); // connect → error
    await row('remote_hello').locator('[data-testid="mcp-status"][data-status="error"]').waitFor();
    await row('remote_hello').getByTestId('mcp-row-error').waitFor();
    assert.match(await row('remote_hello').getByTestId('mcp-lifecycle').innerText(), /Retry connection/);
    await screenshot(page, 'mcp-03-error');
  });

  test('Scenario: delete asks for confirmation and removes the row', async () => {
    await row('remote_hello').getByTestId('mcp-more').click();
    await page.getByTestId('mcp-delete').click();
    await page.getByRole('dialog').getByText('Delete Remote hello (edited)?').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await row('remote_hello').waitFor({ state: 'detached' });
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: the form adds a stdio server with a notice, masked env and it connects', async () => {
    await page.getByTestId('mcp-create').click();
    await page.getByTestId('mcp-form-type').click();
    await page.getByTestId('mcp-form-type-stdio').click();
    const notice = page.getByTestId('mcp-stdio-notice');
    await notice.waitFor();
    assert.match(await notice.innerText(), /runs a program on this machine/);
    assert.equal(await page.getByTestId('mcp-form-url').count(), 0);
    await page.getByTestId('mcp-form-name').fill('local_everything');
    await page.getByTestId('mcp-form-command').fill('node');
    await page.getByTestId('mcp-form-args').fill(`${EVERYTHING_JS}\nstdio`);
    await page.getByTestId('mcp-add-env').click();
    await page.getByTestId('mcp-env-name').fill('EVERYTHING_TOKEN');
    await page.getByTestId('mcp-env-value').fill(ENV_SECRET);
    await screenshot(page, 'mcp-07-stdio-form');
    await page.getByTestId('mcp-form-save').click();
    await row('local_everything').waitFor();
    assert.match(await row('local_everything').innerText(), /local_everything · STDIO · 0 tools/);
    const listed = await (await fetch(`${api.url}/api/mcp/servers`)).text();
    assert.ok(!listed.includes(ENV_SECRET), 'the env value is never returned');
    assert.match(listed, /"EVERYTHING_TOKEN":"\*{8}"/);
    await row('local_everything').getByTestId('mcp-lifecycle').click();
    await row('local_everything').locator('[data-testid="mcp-status"][data-status="connected"]').waitFor({ timeout: 40_000 });
  });

  test('Scenario: pasting a Claude Desktop config imports its servers and reports the skipped ones', async () => {
    await page.getByTestId('mcp-import').click();
    const config = {
      mcpServers: {
        pasted_everything: { command: 'node', args: [EVERYTHING_JS, 'stdio'] },
        local_everything: { command: 'node', args: [EVERYTHING_JS, 'stdio'] },
      },
    };
    await page.getByTestId('mcp-import-json').fill(JSON.stringify(config, null, 2));
    await page.getByTestId('mcp-import-submit').click();
    const result = page.getByTestId('mcp-import-result');
    await result.waitFor();
    assert.match(await result.innerText(), /Created: pasted_everything/);
    assert.match(await result.innerText(), /Skipped local_everything: MCP server already exists: local_everything/);
    await screenshot(page, 'mcp-08-import');
    await page.getByRole('dialog').getByRole('button', { name: 'Dismiss' }).click();
    await row('pasted_everything').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
