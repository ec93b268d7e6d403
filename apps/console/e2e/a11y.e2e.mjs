// Browser e2e of accessibility (openspec/specs/console/spec.md "Requirement: Accessibility"): the built API serving
// the built console, Debian Chromium through playwright-core, and axe-core injected into each page. Every view (a chat
// with messages and a tool card, MCP Market, Skill Market, the Skill editor, Memory, Skill evolution, Settings) is
// checked in light and dark theme, in English and Simplified Chinese, against WCAG 2.0/2.1/2.2 A and AA; a serious or
// critical violation fails. The skip link moves focus to the main landmark.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve('axe-core/axe.min.js');
const TIMEOUT = 20_000;
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const SKILL = 'e2e-a11y';
const SKILL_MD = `---\nname: ${SKILL}\ndescription: Checks the weather for the accessibility e2e.\n---\n\n# Weather\n\nSay the weather.\n`;

/** Runs axe on the page; returns the serious and critical violations, one readable line each. */
async function seriousViolations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_PATH });
  const results = await page.evaluate(
    (tags) => window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    WCAG_TAGS,
  );
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.slice(0, 5).map((node) => node.target.join(' ')).join(' | ')}`);
}

describe('Accessibility', { timeout: 600_000 }, () => {
  let api;
  let fake;
  let browser;
  let chatUrl;
  const pageErrors = [];

  async function rest(method, path, body) {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  }

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await rest('PUT', '/api/settings/llm', {
      openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-a11y' },
      ollama: { base_url: '' },
    });
    assert.equal(saved.status, 200);
    assert.equal((await rest('POST', '/api/skills', { name: SKILL, content: SKILL_MD })).status, 201);
    const automation = await rest('POST', '/api/automations', {
      name: 'Morning brief',
      prompt: 'Summarise what is new.',
      schedule: { kind: 'cron', expression: '0 8 * * 1-5', timezone: 'Europe/Berlin' },
      enabled: true,
      llm: null,
      tools: null,
      mcp_servers: null,
      skills: null,
      approvals: 'deny',
      budget: null,
      max_run_seconds: 600,
      chat_mode: 'single',
      missed: 'run_once',
      delivery: null,
    });
    assert.equal(automation.status, 201, JSON.stringify(automation.body));
    browser = await launchBrowser();

    // one chat with a user message, an answer with Markdown and a tool card
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    fake.enqueue(
      { toolCalls: [{ name: 'list_dir', arguments: '{"path":"."}' }] },
      { content: 'The workspace is **empty**.\n\n| Name | Size |\n| --- | --- |\n| notes.md | 1 KB |\n' },
    );
    await page.goto(api.url);
    await page.getByTestId('new-chat').click();
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('composer-input').fill('What is in my workspace?');
    await page.getByTestId('composer-input').press('Enter');
    await page.getByTestId('assistant-text').filter({ hasText: 'The workspace is' }).waitFor();
    await page.locator('cc-tool-block').first().waitFor();
    chatUrl = page.url();
    await context.close();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function openPage(theme, lang) {
    // the server's CSP (script-src 'self') would refuse the injected axe source: bypassed for the test's context only
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: theme, bypassCSP: true });
    await context.addInitScript(
      ([language, mode]) => {
        localStorage.setItem('cashcode.lang', language);
        localStorage.setItem('cashcode.theme', mode);
      },
      [lang, theme],
    );
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return { context, page };
  }

  /** Each view and what shows that it is ready. */
  const VIEWS = [
    {
      name: 'chat',
      open: async (page) => {
        await page.goto(chatUrl);
        await page.getByTestId('assistant-text').first().waitFor();
        await page.locator('cc-tool-block').first().waitFor();
      },
    },
    { name: 'mcp-market', open: async (page) => (await page.goto(`${api.url}/mcp`), page.locator('[data-testid^="mcp-row-"]').first().waitFor()) },
    { name: 'skill-market', open: async (page) => (await page.goto(`${api.url}/skills`), page.getByTestId('skill-edit').first().waitFor()) },
    {
      name: 'skill-editor',
      open: async (page) => {
        await page.goto(`${api.url}/skills`);
        await page.getByTestId('skill-edit').first().click();
        await page.getByTestId('skill-editor-valid').waitFor();
      },
    },
    { name: 'memory', open: async (page) => (await page.goto(`${api.url}/memory`), page.locator('cc-memory-page, main h1').first().waitFor()) },
    { name: 'evolution', open: async (page) => (await page.goto(`${api.url}/evolution`), page.locator('main h1').first().waitFor()) },
    { name: 'settings-llm', open: async (page) => (await page.goto(`${api.url}/settings/llm`), page.locator('main h1').first().waitFor()) },
    { name: 'settings-tools', open: async (page) => (await page.goto(`${api.url}/settings/tools`), page.locator('main h1').first().waitFor()) },
    { name: 'usage', open: async (page) => (await page.goto(`${api.url}/usage`), page.getByTestId('usage-totals').waitFor()) },
    { name: 'settings-usage', open: async (page) => (await page.goto(`${api.url}/settings/usage`), page.getByTestId('limits-form').waitFor()) },
    { name: 'automations', open: async (page) => (await page.goto(`${api.url}/automations`), page.getByTestId('automation-row').first().waitFor()) },
    {
      name: 'automation-editor',
      open: async (page) => {
        await page.goto(`${api.url}/automations`);
        await page.getByTestId('automation-new').click();
        await page.getByTestId('schedule-description').waitFor();
      },
    },
    { name: 'settings-channels', open: async (page) => (await page.goto(`${api.url}/settings/channels`), page.getByTestId('telegram-status').waitFor()) },
  ];

  for (const theme of ['light', 'dark']) {
    for (const lang of ['en', 'zh-CN']) {
      test(`Scenario: every view passes axe (WCAG 2.2 AA) without serious or critical violations — ${theme}, ${lang}`, async () => {
        const { context, page } = await openPage(theme, lang);
        try {
          const failures = [];
          for (const view of VIEWS) {
            await view.open(page);
            // animations and lazy content settle
            await page.waitForTimeout(300);
            const violations = await seriousViolations(page);
            if (violations.length > 0) {
              failures.push(`${view.name}:\n  ${violations.join('\n  ')}`);
              await screenshot(page, `a11y-${view.name}-${theme}-${lang}`);
            }
          }
          assert.deepEqual(failures, [], failures.join('\n'));
          assert.deepEqual(pageErrors, []);
        } finally {
          await context.close();
        }
      });
    }
  }

  test('Scenario: the skip link moves keyboard focus to the main landmark', async () => {
    const { context, page } = await openPage('light', 'en');
    try {
      await page.goto(chatUrl);
      await page.getByTestId('assistant-text').first().waitFor();
      assert.equal(await page.locator('main').count(), 1, 'one main landmark');
      await page.keyboard.press('Tab');
      const skip = page.getByTestId('skip-link');
      assert.equal(await skip.evaluate((element) => element === document.activeElement), true, 'the skip link is the first stop');
      assert.ok((await skip.boundingBox()).y >= 0, 'the focused skip link is visible');
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'MAIN');
      assert.equal(new URL(page.url()).hash, '', 'the URL keeps no fragment');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.querySelector('main')?.contains(document.activeElement)), true, 'the next Tab stays in main');
    } finally {
      await context.close();
    }
  });

  test('Scenario: per-item buttons and switches are named after their item', async () => {
    const { context, page } = await openPage('light', 'en');
    try {
      await page.goto(`${api.url}/skills`);
      const row = page.getByTestId(`skill-row-${SKILL}`);
      await row.waitFor();
      assert.match(await row.getByTestId('skill-view').getAttribute('aria-label'), /^View \S/);
      assert.match(await row.getByTestId('skill-edit').getAttribute('aria-label'), /^Edit \S/);
      const names = await page.getByTestId('skill-view').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
      assert.equal(new Set(names).size, names.length, `each View button has its own name: ${names.join(', ')}`);
      await page.goto(`${api.url}/mcp`);
      await page.locator('[data-testid^="mcp-row-"]').first().waitFor();
      const switches = await page.locator('[role="switch"], mat-slide-toggle button').evaluateAll((elements) =>
        elements.map((element) => element.getAttribute('aria-label') ?? element.getAttribute('aria-labelledby') ?? ''),
      );
      for (const name of switches) assert.notEqual(name.trim(), '', 'every switch has an accessible name');
    } finally {
      await context.close();
    }
  });

  test('Scenario: filled buttons show a visible focus ring in both themes', async () => {
    for (const theme of ['light', 'dark']) {
      const { context, page } = await openPage(theme, 'en');
      try {
        await page.goto(`${api.url}/settings/llm`);
        const button = page.locator('main button.mat-mdc-unelevated-button, main button[mat-flat-button]').first();
        await button.waitFor();
        // keyboard focus (not a click) is what :focus-visible shows
        await button.evaluate((element) => element.setAttribute('data-e2e-focus', ''));
        await page.keyboard.press('Tab');
        await page.locator('[data-e2e-focus]').focus();
        await page.keyboard.press('Shift+Tab');
        await page.keyboard.press('Tab');
        const ring = await page.locator('[data-e2e-focus]').evaluate((element) => {
          const style = getComputedStyle(element);
          return { focused: element.matches(':focus-visible'), width: parseFloat(style.outlineWidth), style: style.outlineStyle };
        });
        assert.equal(ring.focused, true, `the filled button has keyboard focus (${theme})`);
        assert.ok(ring.style !== 'none' && ring.width >= 2, `a visible outline of at least 2px (${theme}): ${JSON.stringify(ring)}`);
        await screenshot(page, `a11y-focus-ring-${theme}`);
      } finally {
        await context.close();
      }
    }
  });
});
