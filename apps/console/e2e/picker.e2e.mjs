// Browser e2e of the composer's `@` capability picker (openspec/specs/console/spec.md): the built API serving the built
// console, the fake model server as the only model, an uploaded Skill and the repo's built-in stdio MCP test server,
// Debian Chromium through playwright-core. Scenarios run in order on one server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, connected, launchBrowser, repoRoot, screenshot, startApi } from './support/harness.mjs';
import { SKILL_MARKER, SKILL_NAME, skillZip } from './support/skill-zip.mjs';

const TIMEOUT = 20_000;
const STDIO_SERVER = join(repoRoot, 'mcp_servers', 'test_stdio_mcp', 'dist', 'index.js');
const MCP_SERVER = 'test_stdio_mcp';
const MCP_TOOL = `mcp_${MCP_SERVER}_say_hello`;

describe('Composer @ picker', { timeout: 180_000 }, () => {
  let fake;
  let api;
  let browser;
  let context;
  let page;
  const pageErrors = [];

  async function rest(method, path, body) {
    const init = { method, headers: {} };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${api.url}${path}`, init);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  before(async () => {
    assertBuilt();
    if (!existsSync(STDIO_SERVER)) throw new Error('build the MCP test servers first (npm run build:mcp)');
    fake = await FakeModelServer.start();
    api = await startApi();
    const settings = await rest('PUT', '/api/settings/llm', {
      openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test' },
      ollama: {},
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    // the Skill arrives the way a user adds one: a ZIP through the import endpoint
    const form = new FormData();
    form.append('file', new Blob([await skillZip()], { type: 'application/zip' }), `${SKILL_NAME}.zip`);
    const imported = await rest('POST', '/api/skills/import', form);
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  const composer = () => page.getByTestId('composer-input');
  const picker = () => page.getByTestId('capability-picker');
  /** waits until the active row shows `text` (rendering follows the key press asynchronously) */
  const expectActive = (text) => picker().locator('.cc-option.cc-active').filter({ hasText: text }).waitFor();

  async function openChat() {
    await page.goto(api.url);
    await connected(page).waitFor();
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('send-button').waitFor();
  }

  test('Scenario: @ opens the picker only at a token boundary; Escape and Backspace navigate', async () => {
    await openChat();
    await composer().click();
    await composer().pressSequentially('write to mail@example.com');
    assert.equal(await picker().count(), 0, 'an @ inside a word does not trigger');
    await composer().fill('');
    await composer().pressSequentially('@');
    await picker().waitFor();
    assert.equal(await picker().getAttribute('data-level'), 'category');
    await expectActive('Connected tool servers');
    await composer().press('ArrowUp'); // wraps to the last row
    await expectActive('Local Skills available now');
    await composer().press('ArrowDown'); // and back to the first
    await expectActive('Connected tool servers');
    await composer().press('ArrowDown');
    await expectActive('Local Skills available now');
    await screenshot(page, 'picker-01-categories');
    await composer().press('Enter');
    await picker().getByTestId(`picker-item-${SKILL_NAME}`).waitFor();
    await composer().press('Backspace'); // empty query: back to the categories, the @ stays
    await picker().getByTestId('picker-kind-skill').waitFor();
    await expectActive('Local Skills available now');
    assert.equal(await composer().inputValue(), '@');
    await composer().press('Escape');
    await picker().waitFor({ state: 'detached' });
    await composer().pressSequentially('notes');
    assert.equal(await picker().count(), 0, 'dismissed for this @ until the trigger changes');
    await composer().fill('');
  });

  test('Scenario: @ → Skill → pick the uploaded Skill → the model gets its body and the bubble shows the chip', async () => {
    await composer().pressSequentially('Summarise @');
    await picker().getByTestId('picker-kind-skill').click();
    await picker().getByTestId(`picker-item-${SKILL_NAME}`).waitFor();
    // only enabled, available Skills are listed; built-ins with missing dependencies are not
    assert.equal(await picker().getByTestId('picker-item-github').count(), 0);
    await composer().pressSequentially('tidy');
    await picker().getByTestId('picker-filter').filter({ hasText: 'Filter: tidy' }).waitFor();
    const item = picker().getByTestId(`picker-item-${SKILL_NAME}`);
    assert.match(await item.innerText(), /E2E Notes\s+e2e-notes/);
    await screenshot(page, 'picker-02-skills');
    await composer().press('Enter');
    const chip = page.getByTestId(`composer-chip-skill-${SKILL_NAME}`);
    await chip.waitFor();
    await screenshot(page, 'picker-03-chip');
    assert.match(await chip.innerText(), /E2E Notes/);
    assert.equal(await composer().inputValue(), 'Summarise ');
    await composer().pressSequentially('my notes');
    fake.enqueue({ content: 'Three tidy lines.' });
    const before = fake.completions.length;
    await composer().press('Enter');
    const user = page.locator('[data-role="user"]').last();
    await user.getByTestId('user-chip-skill').filter({ hasText: 'E2E Notes' }).waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'Three tidy lines.' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.equal(await page.getByTestId('composer-chips').count(), 0, 'chips are cleared after sending');
    const request = fake.completions[before].body;
    const systems = request.messages.filter((message) => message.role === 'system').map((message) => message.content);
    assert.ok(systems.some((content) => content.includes(SKILL_MARKER)), 'the Skill body is in a system message');
    assert.equal(request.messages.at(-1).content, 'Summarise my notes');
    await screenshot(page, 'picker-04-skill-sent');
  });

  test('Scenario: a reopened chat shows the receipts and a "skill loaded" chip, not an assistant bubble', async () => {
    await page.reload();
    const user = page.locator('[data-role="user"]').last();
    await user.getByTestId('user-chip-skill').filter({ hasText: 'E2E Notes' }).waitFor();
    const loaded = user.getByTestId('skill-loaded-chip');
    await loaded.waitFor();
    assert.match(await loaded.innerText(), /Skill loaded: e2e-notes v1/);
    assert.equal(await page.getByTestId('assistant-message').count(), 1, 'only the answer is an assistant bubble');
    assert.equal(await page.getByText('[Skill loaded:').count(), 0);
    await screenshot(page, 'picker-05-reopened');
  });

  test('Scenario: @ → MCP → pick a connected server → the model sees its tools and the turn succeeds', async () => {
    const connected = await rest('POST', `/api/mcp/servers/${MCP_SERVER}/connect`, {});
    assert.equal(connected.body.status, 'connected', JSON.stringify(connected.body));
    await page.getByTestId('new-chat').click();
    await page.getByTestId('user-message').first().waitFor({ state: 'detached' });
    await composer().pressSequentially('@');
    await composer().press('Enter'); // MCP is the first category
    const item = picker().getByTestId(`picker-item-${MCP_SERVER}`);
    await item.waitFor();
    assert.match(await item.innerText(), /\b1 tool\b(?!s)/);
    await screenshot(page, 'picker-06-mcp');
    await composer().press('Enter');
    await page.getByTestId(`composer-chip-mcp-${MCP_SERVER}`).waitFor();
    await composer().pressSequentially('Say hello');
    fake.enqueue({ toolCalls: [{ name: MCP_TOOL, arguments: '{}' }] }, { content: 'The server says: Hello, Cash' });
    const before = fake.completions.length;
    await composer().press('Enter');
    const user = page.locator('[data-role="user"]').last();
    await user.getByTestId('user-chip-mcp').waitFor();
    await page.locator('cc-tool-block[data-status="ok"]').waitFor();
    await page.getByTestId('assistant-text').filter({ hasText: 'The server says: Hello, Cash' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    assert.equal(await page.getByTestId('chat-error').count(), 0);
    const request = fake.completions[before].body;
    const tools = (request.tools ?? []).map((tool) => tool.function?.name);
    assert.ok(tools.includes(MCP_TOOL), `the model's request lists ${MCP_TOOL}: ${tools.join(', ')}`);
    const toolMessage = fake.completions[before + 1].body.messages.find((message) => message.role === 'tool');
    assert.match(String(toolMessage?.content), /Hello, Cash/);
    await screenshot(page, 'picker-07-mcp-sent');
  });

  test('Scenario: switching chats clears the chips; the picker speaks Simplified Chinese', async () => {
    await composer().pressSequentially('@');
    await composer().press('Enter');
    await picker().getByTestId(`picker-item-${MCP_SERVER}`).waitFor();
    await composer().press('Enter');
    await page.getByTestId(`composer-chip-mcp-${MCP_SERVER}`).waitFor();
    await composer().pressSequentially('kept draft');
    const other = page.locator('[data-testid="session-row"]:not(.cc-active)').first();
    const otherId = await other.getAttribute('data-chat-id');
    await other.locator('.cc-session-open').click();
    await page.locator(`[data-testid="session-row"].cc-active[data-chat-id="${otherId}"]`).waitFor();
    await page.getByTestId('composer-chips').waitFor({ state: 'detached' });
    assert.equal(await composer().inputValue(), 'kept draft', 'the typed text is kept');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'composer-input');
    await composer().fill('');
    await page.evaluate(() => localStorage.setItem('cashcode.lang', 'zh-CN'));
    await page.reload();
    await page.getByTestId('send-button').waitFor();
    await composer().pressSequentially('@');
    await picker().getByText('已连接的工具服务').waitFor();
    await picker().getByText('当前可用的本地 Skill').waitFor();
    await composer().press('ArrowDown');
    await expectActive('当前可用的本地 Skill');
    await composer().press('Enter');
    await picker().getByTestId(`picker-item-${SKILL_NAME}`).waitFor();
    await composer().pressSequentially('zzz');
    await picker().getByText('没有匹配的可用 Skill').waitFor();
    await screenshot(page, 'picker-08-zh-cn');
    assert.deepEqual(pageErrors, []);
  });
});
