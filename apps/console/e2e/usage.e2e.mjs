// Browser e2e of usage, prices and spend limits in the console (openspec/specs/usage/spec.md, "Requirement: Usage in
// the console"): the built API serving the built console, the fake model server (with usage in its answers) as the
// only model, Debian Chromium through playwright-core. The scenarios build on each other: two turns, then prices,
// then a low limit, then the export.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('CashCode console: usage, prices and spend limits', { timeout: 180_000 }, () => {
  let fake;
  let api;
  let browser;
  let context;
  let page;
  const pageErrors = [];

  async function rest(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${api.url}${path}`, init);
    const text = await response.text();
    return { status: response.status, body: text && text.startsWith('{') ? JSON.parse(text) : text };
  }

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const settings = await rest('PUT', '/api/settings/llm', {
      openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test' },
      ollama: {},
    });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
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

  async function sendMessage(text) {
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  async function answer(text, reply, usage) {
    fake.enqueue({ content: reply, usage });
    await sendMessage(text);
    await page.getByTestId('assistant-text').filter({ hasText: reply }).waitFor();
    await page.getByTestId('send-button').waitFor();
  }

  /** The legend of a chart as `label total` lines. */
  async function legend(grouping) {
    const items = page.getByTestId(`usage-${grouping}-legend`).getByTestId('usage-legend-item');
    const texts = await items.evaluateAll((nodes) =>
      nodes.map((node) => [...node.children].map((part) => part.textContent.trim()).filter(Boolean).join(' ')),
    );
    return texts;
  }

  test("Scenario: after two chat turns the Usage page shows the day's tokens by model and by purpose", async () => {
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await answer('First question', 'First answer.', { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
    await answer('Second question', 'Second answer.', { prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 });
    // no price yet: the answers show their tokens and "no price"
    const costs = page.getByTestId('answer-cost');
    await costs.nth(1).waitFor();
    assert.deepEqual(await costs.allTextContents(), ['no price', 'no price']);

    await page.getByTestId('nav-usage').click();
    await page.getByTestId('usage-total-tokens').filter({ hasText: '360' }).waitFor();
    assert.equal((await page.getByTestId('usage-total-calls').textContent()).trim(), '2');
    assert.equal((await page.getByTestId('usage-total-cost').textContent()).trim(), 'No price');
    assert.deepEqual(await legend('model'), ['fake-model · OpenAI-compatible 360']);
    assert.deepEqual(await legend('purpose'), ['Chat 360']);
    // the chart is an image with a summary for screen readers, one bar segment for the day
    const svg = page.getByTestId('usage-model-svg');
    assert.match(await svg.getAttribute('aria-label'), /^By model: Tokens per day from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, largest fake-model/);
    assert.equal(await svg.locator('rect').count(), 1);
    await screenshot(page, 'usage-01-page');
  });

  test('Scenario: prices entered in Settings make the answer show a cost', async () => {
    await page.getByTestId('usage-edit-limits').click();
    await page.getByTestId('prices-form').waitFor();
    await page.getByTestId('price-add').click();
    await page.getByTestId('price-model').fill('fake-model');
    await page.getByTestId('price-input').fill('1');
    await page.getByTestId('price-output').fill('2');
    await page.getByTestId('price-currency').fill('USD');
    await page.getByTestId('prices-save').click();
    await page.getByTestId('prices-message').filter({ hasText: 'Saved' }).waitFor();
    const stored = await rest('GET', '/api/usage/prices');
    assert.deepEqual(stored.body.prices, [
      { provider: 'openai_compatible', model: 'fake-model', input_per_million: 1, output_per_million: 2, currency: 'USD' },
    ]);

    await page.getByTestId('new-chat').click();
    // (1000 × $1 + 500 × $2) / 1e6 = $0.002
    await answer('A priced question', 'Priced answer.', { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 });
    await page.getByTestId('answer-cost').filter({ hasText: '$0.002' }).waitFor();
    // the chat's total adds what the chat has cost so far
    await page.getByTestId('chat-usage-total').filter({ hasText: 'spent $0.002' }).waitFor();
    // and after a reload the answer keeps its cost
    await page.reload();
    await page.getByTestId('assistant-text').filter({ hasText: 'Priced answer.' }).waitFor();
    await page.getByTestId('answer-cost').filter({ hasText: '$0.002' }).waitFor();
    await screenshot(page, 'usage-02-priced-answer');
  });

  test('Scenario: a limit set low shows the banner and refuses the next turn with a clear message', async () => {
    // 120 + 240 + 1500 = 1,860 tokens used today: a 2,300-token daily limit is at 81 %, past the 80 % warning
    await page.getByTestId('nav-usage-settings').click();
    await page.getByTestId('limits-form').waitFor();
    assert.equal(await page.getByTestId('limits-warn-at').inputValue(), '80');
    await page.getByTestId('limit-add').click();
    await page.getByTestId('limit-amount').fill('2300');
    await page.getByTestId('limits-save').click();
    await page.getByTestId('limits-message').filter({ hasText: 'Saved' }).waitFor();

    await page.getByTestId('new-chat').click();
    const banner = page.getByTestId('usage-banner');
    await banner.waitFor();
    assert.match(await banner.textContent(), /You have used 81% of your daily limit for all models \(1,860 of 2,300\); it resets /);
    await screenshot(page, 'usage-03-banner');

    // the next turn's estimate (its prompt and the default output allowance) would cross the limit: refused
    const callsBefore = fake.completions.length;
    await sendMessage('One more, please');
    const error = page.getByTestId('turn-error');
    await error.first().waitFor();
    assert.match(await error.first().textContent(), /Refused: this would cross your daily limit for all models \(1,860 of 2,300 spent\)\. It resets /);
    assert.equal(fake.completions.length, callsBefore, 'the refused call never reached the model');
    await screenshot(page, 'usage-04-refused');

    // dismissing hides the banner
    await banner.getByTestId('usage-banner-dismiss').click();
    await banner.waitFor({ state: 'detached' });

    // the Usage page shows the limit with its share and state
    await page.getByTestId('nav-usage').click();
    const limit = page.getByTestId('usage-limit');
    await limit.waitFor();
    assert.equal(await limit.getAttribute('data-state'), 'warning');
    assert.equal(await limit.locator('[role="meter"]').getAttribute('aria-valuenow'), '81');
    assert.match(await limit.getByTestId('usage-limit-use').textContent(), /1,860 of 2,300 \(81%\)/);
  });

  test('Scenario: the CSV export downloads a file with the rows', async () => {
    await page.getByTestId('usage-total-tokens').waitFor();
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('usage-export').click()]);
    assert.match(file.suggestedFilename(), /^cashcode-usage-\d{4}-\d\d-\d\d-\d{4}-\d\d-\d\d\.csv$/);
    const text = await readFile(await file.path(), 'utf8');
    const lines = text.trim().split(/\r?\n/);
    assert.match(lines[0], /^id,at,provider,model,/);
    const rows = lines.slice(1);
    // three answered calls and the refused one
    assert.equal(rows.length, 4, text);
    assert.equal(rows.filter((row) => row.includes('fake-model')).length, 4);
    assert.equal(rows.filter((row) => row.includes('refused')).length, 1);
  });

  test('Scenario: leaving Prices & limits with an unsaved edit asks first', async () => {
    await page.getByTestId('nav-usage-settings').click();
    await page.waitForURL(/\/settings\/usage$/);
    const amount = page.getByTestId('limit-amount');
    await amount.fill('9999');
    await page.getByTestId('nav-usage').click();
    const dialog = page.getByRole('dialog').filter({ hasText: 'Leave without saving?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Stay' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(page.url(), /\/settings\/usage$/);
    assert.equal(await amount.inputValue(), '9999');
    await page.getByTestId('nav-usage').click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL(/\/usage$/);
    // nothing was saved behind the user's back
    const stored = await rest('GET', '/api/usage/limits');
    assert.equal(stored.body.limits[0].amount, 2300);
  });

  test('the console raised no uncaught errors during the scenarios', () => {
    assert.deepEqual(pageErrors, []);
  });
});
