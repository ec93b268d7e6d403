// Browser e2e of the console on a phone and of the connection pill (openspec/specs/console/spec.md "Requirement: Phone
// layout" and "Requirement: Gateway connection"): the built API serving the built console, Debian Chromium through
// playwright-core. At 390×844 no view scrolls sideways (wide tables scroll inside their own box instead of breaking
// words); screenshots of each view in light/dark, en/zh-CN, desktop/phone go to e2e/artifacts/. The title bar says
// "Server connected" and shows "Model unreachable" when the configured model service cannot be reached.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, freePort, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const WIDE_TABLE = [
  '| Region | Population | Capital | Languages | Currency | Time zone |',
  '| --- | --- | --- | --- | --- | --- |',
  '| Northernmostprovinceofalongname | 12,345,678 | Averyveryverylongcapitalname | English, Simplified Chinese | Renminbi | UTC+08:00 |',
  '| South | 1,234 | Town | English | Dollar | UTC-05:00 |',
].join('\n');

describe('Phone layout and connection pill', { timeout: 600_000 }, () => {
  let api;
  let fake;
  let browser;
  let chatUrl;
  const pageErrors = [];

  async function putLlm(baseUrl) {
    const response = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: baseUrl, api_key: 'sk-e2e-phone' }, ollama: { base_url: '' } }),
    });
    assert.equal(response.status, 200);
  }

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    await putLlm(fake.baseUrl);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    fake.enqueue(
      { toolCalls: [{ name: 'list_dir', arguments: '{"path":"."}' }] },
      { content: `Here is the overview:\n\n${WIDE_TABLE}\n` },
    );
    await page.goto(api.url);
    await page.getByTestId('new-chat').click();
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('composer-input').fill('Show me the regions');
    await page.getByTestId('composer-input').press('Enter');
    await page.locator('.cc-markdown table, cc-markdown table, table').first().waitFor();
    chatUrl = page.url();
    await context.close();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function openPage(viewport, theme, lang) {
    const context = await browser.newContext({ viewport, colorScheme: theme, hasTouch: viewport === PHONE, isMobile: viewport === PHONE });
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

  const VIEWS = [
    { name: 'chat', path: () => chatUrl, ready: (page) => page.locator('main table').first().waitFor() },
    { name: 'mcp-market', path: () => `${api.url}/mcp`, ready: (page) => page.locator('[data-testid^="mcp-row-"]').first().waitFor() },
    { name: 'skill-market', path: () => `${api.url}/skills`, ready: (page) => page.locator('[data-testid^="skill-row-"]').first().waitFor() },
    { name: 'memory', path: () => `${api.url}/memory`, ready: (page) => page.locator('main h1').first().waitFor() },
    { name: 'evolution', path: () => `${api.url}/evolution`, ready: (page) => page.locator('main h1').first().waitFor() },
    { name: 'settings-llm', path: () => `${api.url}/settings/llm`, ready: (page) => page.locator('main h1').first().waitFor() },
    { name: 'settings-tools', path: () => `${api.url}/settings/tools`, ready: (page) => page.locator('main h1').first().waitFor() },
    { name: 'usage', path: () => `${api.url}/usage`, ready: (page) => page.getByTestId('usage-totals').waitFor() },
    { name: 'settings-usage', path: () => `${api.url}/settings/usage`, ready: (page) => page.getByTestId('limits-form').waitFor() },
    { name: 'settings-channels', path: () => `${api.url}/settings/channels`, ready: (page) => page.getByTestId('telegram-status').waitFor() },
  ];

  /** the elements wider than the viewport (a page that scrolls sideways names its culprits) */
  const overflow = (page) =>
    page.evaluate(() => {
      const width = window.innerWidth;
      const culprits = [];
      for (const element of document.querySelectorAll('body *')) {
        const box = element.getBoundingClientRect();
        if (box.width > 0 && box.right > width + 1 && getComputedStyle(element).visibility !== 'hidden') {
          // inside a horizontally scrolling box that fits is fine; clipped by `overflow: hidden` is not (cut off)
          let scroller = element.parentElement;
          let clipped = false;
          while (scroller && scroller !== document.body) {
            const style = getComputedStyle(scroller);
            if (/(auto|scroll)/.test(style.overflowX) && scroller.getBoundingClientRect().right <= width + 1) {
              clipped = true;
              break;
            }
            scroller = scroller.parentElement;
          }
          if (!clipped) culprits.push(`${element.tagName.toLowerCase()}.${[...element.classList].join('.')} right=${Math.round(box.right)}`);
        }
      }
      return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, culprits: culprits.slice(0, 8) };
    });

  for (const lang of ['en', 'zh-CN']) {
    test(`Scenario: no view scrolls sideways on a 390×844 phone — ${lang}`, async () => {
      const failures = [];
      for (const theme of ['light', 'dark']) {
        const { context, page } = await openPage(PHONE, theme, lang);
        try {
          for (const view of VIEWS) {
            await page.goto(view.path());
            await view.ready(page);
            await page.waitForTimeout(200);
            const result = await overflow(page);
            if (result.scrollWidth > result.innerWidth || result.culprits.length > 0) failures.push(`${view.name} (${theme}): ${JSON.stringify(result)}`);
            await screenshot(page, `phone-${view.name}-${theme}-${lang}`);
          }
        } finally {
          await context.close();
        }
      }
      assert.deepEqual(failures, [], failures.join('\n'));
      assert.deepEqual(pageErrors, []);
    });
  }

  test('Scenario: a wide table scrolls inside its box on a phone instead of breaking words', async () => {
    const { context, page } = await openPage(PHONE, 'light', 'en');
    try {
      await page.goto(chatUrl);
      const table = page.locator('main table').first();
      await table.waitFor();
      const box = await table.evaluate((element) => {
        let scroller = element.parentElement;
        while (scroller && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowX)) scroller = scroller.parentElement;
        const cell = [...element.querySelectorAll('td')].find((td) => td.textContent.includes('Northernmost'));
        // the line boxes of the cell's one long word: 1 when it is not broken
        const range = document.createRange();
        range.selectNodeContents(cell);
        return {
          scrolls: scroller !== null && scroller.scrollWidth > scroller.clientWidth,
          wordLines: range.getClientRects().length,
        };
      });
      assert.equal(box.scrolls, true, 'the table scrolls horizontally in its own box');
      assert.equal(box.wordLines, 1, `the long word is not broken: ${JSON.stringify(box)}`);
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width);
      // the tool card's result scrolls too
      await page.locator('cc-tool-block .cc-tool-head').first().click();
      await page.getByTestId('tool-result').first().waitFor();
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width);
      await screenshot(page, 'phone-chat-wide-table');
    } finally {
      await context.close();
    }
  });

  test('Scenario: desktop screenshots of every view in both themes and languages', async () => {
    for (const theme of ['light', 'dark']) {
      for (const lang of ['en', 'zh-CN']) {
        const { context, page } = await openPage(DESKTOP, theme, lang);
        try {
          for (const view of VIEWS) {
            await page.goto(view.path());
            await view.ready(page);
            await screenshot(page, `desktop-${view.name}-${theme}-${lang}`);
          }
        } finally {
          await context.close();
        }
      }
    }
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: the pill says the server is connected, and an unreachable model shows as such', async () => {
    const { context, page } = await openPage(DESKTOP, 'light', 'en');
    try {
      await page.goto(chatUrl);
      await page.getByTestId('connection-state').filter({ hasText: 'Server connected' }).waitFor();
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      assert.equal(await page.getByTestId('model-state').count(), 0, 'a reachable model shows no warning');

      // the saved base URL now points at a port nobody listens on
      await putLlm(`http://127.0.0.1:${await freePort()}/v1`);
      await page.reload();
      const model = page.getByTestId('model-state');
      await model.waitFor();
      assert.equal(await model.innerText(), 'Model unreachable');
      assert.match(await model.getAttribute('title'), /OpenAI-compatible: /);
      await page.getByTestId('connection-state').filter({ hasText: 'Server connected' }).waitFor();
      await screenshot(page, 'pill-model-unreachable-en');

      await page.getByTestId('language-button').click();
      await page.getByRole('menuitem', { name: '简体中文' }).click();
      await page.getByTestId('connection-state').filter({ hasText: '已连接服务器' }).waitFor();
      assert.equal(await model.innerText(), '模型无法访问');
      await screenshot(page, 'pill-model-unreachable-zh-CN');

      await putLlm(fake.baseUrl);
      await page.reload();
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      assert.equal(await page.getByTestId('model-state').count(), 0, 'the warning goes once the model answers again');
    } finally {
      await context.close();
      await putLlm(fake.baseUrl);
    }
  });
});
