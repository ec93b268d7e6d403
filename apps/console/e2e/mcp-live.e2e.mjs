// Browser e2e of a running MCP call in the chat (openspec/specs/console/spec.md, "Tool progress and elicitation
// cards"): the built API serving the built console, @modelcontextprotocol/server-everything over SSE as a user
// server, the fake model scripted to call its long-running and elicitation tools, Debian Chromium through
// playwright-core. Screenshots land in e2e/artifacts/.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;
const require = createRequire(import.meta.url);
const EVERYTHING_JS = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

async function startEverythingSse() {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_JS, 'sse'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
  });
  await new Promise((resolveStart, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${output}`)), 15_000);
    const onData = (chunk) => {
      output += chunk.toString();
      if (/running on port/i.test(output)) {
        clearTimeout(timer);
        resolveStart();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  return { url: `http://127.0.0.1:${port}/sse`, stop: () => child.kill('SIGTERM') };
}

describe('A running MCP call in the chat', { timeout: 300_000 }, () => {
  let fake;
  let api;
  let everything;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    [fake, everything] = await Promise.all([FakeModelServer.start(), startEverythingSse()]);
    api = await startApi();
    const put = async (path, body, method = 'PUT') => {
      const response = await fetch(`${api.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.ok(response.ok, `${method} ${path} → ${response.status}: ${await response.text()}`);
    };
    await put('/api/settings/llm', { openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-mcp-live' }, ollama: { base_url: '' } });
    await put('/api/settings/tool-policies', { defaults: { mcp: 'allow' } });
    await put('/api/mcp/servers', { name: 'everything', display_name: 'Everything', url: everything.url }, 'POST');
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(api.url);
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    everything?.stop();
    await fake?.close();
  });


  async function sendMessage(text) {
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  async function waitForTurnEnd() {
    await page.getByTestId('send-button').waitFor({ state: 'visible' });
  }

  test('Scenario: the tool card shows the progress of a long MCP call', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'mcp_prepare', arguments: JSON.stringify({ server_name: 'everything' }) }] },
      { toolCalls: [{ name: 'mcp_everything_trigger-long-running-operation', arguments: JSON.stringify({ duration: 6, steps: 4 }) }] },
      { content: 'The long operation finished.' },
    );
    await sendMessage('run the long operation');
    const text = page.getByTestId('tool-progress-text');
    await text.filter({ hasText: /Progress [23] of 4/ }).waitFor();
    assert.equal(await page.getByTestId('tool-progress').locator('mat-progress-bar').count(), 1);
    await screenshot(page, 'mcp-tool-progress');
    await page.getByTestId('assistant-text').filter({ hasText: 'The long operation finished.' }).waitFor();
    await waitForTurnEnd();
    // a finished call shows its status, not the bar
    assert.equal(await page.getByTestId('tool-progress').count(), 0);
  });

  test('Scenario: an MCP elicitation becomes a form card that is answered in the chat', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'mcp_everything_trigger-elicitation-request', arguments: '{}' }] },
      { content: 'Thanks for the details.' },
    );
    await sendMessage('ask me for my details');
    const card = page.getByTestId('elicitation-card');
    await card.waitFor();
    assert.equal(await card.getByTestId('elicitation-title').innerText(), 'everything asks for input');
    assert.equal(await card.getByTestId('elicitation-message').innerText(), 'Please provide inputs for the following fields:');
    // the required name is missing: the card says so and sends nothing
    await card.locator('[data-field="name"] input').fill('');
    await card.getByTestId('elicitation-accept').click();
    await screenshot(page, 'mcp-elicitation-missing');
    assert.deepEqual(pageErrors, []);
    assert.match(await card.getByTestId('elicitation-problem').innerText(), /Fill in String first/);
    await card.locator('[data-field="name"] input').fill('Cash Code');
    await card.locator('[data-field="check"] input').check();
    await screenshot(page, 'mcp-elicitation-card');
    await card.getByTestId('elicitation-accept').click();
    await card.getByTestId('elicitation-outcome').filter({ hasText: 'You answered the form.' }).waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'Thanks for the details.' }).waitFor();
    await waitForTurnEnd();
    const toolMessage = fake.completions.at(-1).body.messages.filter((m) => m.role === 'tool').at(-1);
    assert.match(toolMessage.content, /User provided the requested information!/);
    assert.match(toolMessage.content, /- Name: Cash Code\n- Agreed to terms: true/);
    await screenshot(page, 'mcp-elicitation-answered');
    assert.deepEqual(pageErrors, []);
  });
});
