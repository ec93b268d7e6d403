// Browser e2e of a failed tool call's card (openspec/specs/console/spec.md "Requirement: Tool-call blocks"): the built
// API serving the built console with the repo's stdio test server added as a user server (its test tools on), Debian Chromium
// through playwright-core. An MCP tool answering `isError: true` reads Failed with its error text, live and after a
// reload, and the retry hint the agent adds for the model is never shown.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, repoRoot, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const HINT = 'Analyze the error above';

describe('Failed tool cards', { timeout: 180_000 }, () => {
  let api;
  let fake;
  let browser;
  const pageErrors = [];

  async function send(method, path, body) {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(response.status === 200 || response.status === 201, `${path}: ${response.status} ${await response.text()}`);
  }
  const put = (path, body) => send('PUT', path, body);

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    await put('/api/settings/llm', { openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-fail' }, ollama: { base_url: '' } });
    // tools run without asking here; approvals have their own suite
    await put('/api/settings/tool-policies', { defaults: { exec: 'allow', mcp: 'allow' } });
    // the stdio test server with its test tools (among them `fail`, which answers isError: true)
    await send('POST', '/api/mcp/servers', {
      name: 'kit',
      type: 'stdio',
      command: 'node',
      args: [join(repoRoot, 'mcp_servers', 'test_stdio_mcp', 'dist', 'index.js')],
      env: { CASHCODE_MCP_TEST_TOOLS: '1' },
    });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  test('Scenario: an MCP tool error reads as Failed with its error text (browser e2e)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      fake.enqueue(
        { toolCalls: [{ name: 'mcp_prepare', arguments: JSON.stringify({ server_name: 'kit' }) }] },
        { toolCalls: [{ name: 'mcp_kit_fail', arguments: JSON.stringify({ message: 'the printer is on fire' }) }] },
        { toolCalls: [{ name: 'no_such_tool', arguments: '{}' }] },
        { content: 'Both attempts failed.' },
      );
      await page.goto(api.url);
      await page.getByTestId('new-chat').click();
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      await page.getByTestId('composer-input').fill('Print my notes');
      await page.getByTestId('composer-input').press('Enter');
      await page.getByTestId('assistant-text').filter({ hasText: 'Both attempts failed.' }).waitFor();

      const check = async (when) => {
        const card = page.locator('cc-tool-block').filter({ has: page.getByTestId('tool-name').filter({ hasText: 'mcp_kit_fail' }) });
        await card.waitFor();
        assert.equal(await card.getAttribute('data-status'), 'error', `the MCP error is a failed call (${when})`);
        assert.equal(await card.locator('.cc-tool-state').innerText(), 'Failed');
        assert.match(await card.getByTestId('tool-preview').innerText(), /the printer is on fire/);
        const unknown = page.locator('cc-tool-block').filter({ has: page.getByTestId('tool-name').filter({ hasText: 'no_such_tool' }) });
        assert.equal(await unknown.getAttribute('data-status'), 'error');
        assert.equal(await page.locator('cc-tool-block').filter({ hasText: 'mcp_prepare' }).getAttribute('data-status'), 'ok');
        // the error text is red
        const colors = await card.evaluate((element) => ({
          state: getComputedStyle(element.querySelector('.cc-tool-state')).color,
          name: getComputedStyle(element.querySelector('[data-testid="tool-name"]')).color,
        }));
        assert.notEqual(colors.state, colors.name, 'the status is not in the body colour');
        await unknown.locator('.cc-tool-head').click();
        assert.match(await unknown.getByTestId('tool-result').innerText(), /^Error: Tool 'no_such_tool' not found/);
        assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(HINT));
      };
      await check('live');
      await screenshot(page, 'tool-failures-01-live');
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'Both attempts failed.' }).waitFor();
      await check('after a reload');
      await screenshot(page, 'tool-failures-02-reloaded');
      // the model still had the hint
      const toolMessages = fake.completions.at(-1).body.messages.filter((message) => message.role === 'tool');
      assert.ok(toolMessages.some((message) => String(message.content).includes(HINT)));
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });
});
