// Browser e2e of the Automations page (openspec/specs/console/spec.md, "Requirement: Automations page"): the built API
// serving the built console, the fake model server as the only model, Debian Chromium through playwright-core. The
// scenarios build on each other: create an automation with its schedule preview, then run it now, see the run in the
// history and open its chat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, eventually, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('CashCode console: automations', { timeout: 180_000 }, () => {
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
    // a price, so that a run has a cost
    const prices = await rest('PUT', '/api/usage/prices', {
      prices: [{ provider: 'openai_compatible', model: 'fake-model', input_per_million: 1, output_per_million: 2, currency: 'USD' }],
    });
    assert.equal(prices.status, 200, JSON.stringify(prices.body));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'UTC', locale: 'en-US' });
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

  test('Scenario: an automation is created in the editor with a live preview of its schedule and next five runs', async () => {
    await page.goto(api.url);
    await page.getByTestId('nav-automations').click();
    await page.getByTestId('automations-empty').waitFor();
    await page.getByTestId('automation-new').click();
    const editor = page.getByTestId('automation-editor');
    await editor.waitFor();

    // the default schedule is previewed at once, in the browser's zone
    await page.getByTestId('schedule-description').filter({ hasText: 'Monday through Friday' }).waitFor();
    await page.getByTestId('schedule-timezone').selectOption('Europe/Berlin');
    await page.getByTestId('schedule-description').filter({ hasText: '(Europe/Berlin)' }).waitFor();
    const times = page.getByTestId('schedule-next-time');
    await eventually(async () => assert.equal(await times.count(), 5));
    // 08:00 in Berlin, on weekdays only
    for (const text of await times.allTextContents()) assert.match(text, /^(Mon|Tue|Wed|Thu|Fri), .*08:00 AM GMT\+1$/);

    // an expression the server refuses: its problem shows at the schedule field, and the preview goes away
    await page.getByTestId('schedule-cron').fill('0 99 * * *');
    await page.getByTestId('schedule-error').filter({ hasText: /cron expression/i }).waitFor();
    assert.equal(await page.getByTestId('schedule-description').count(), 0);
    // an interval under the server's minimum: refused at the field too
    await page.getByTestId('schedule-kind-interval').check();
    await page.getByTestId('schedule-interval').fill('0.5');
    await page.getByTestId('schedule-unit').selectOption('minutes');
    await page.getByTestId('schedule-error').filter({ hasText: /seconds from 60/ }).waitFor();
    await page.getByTestId('schedule-kind-cron').check();
    await page.getByTestId('schedule-cron').fill('30 7 * * *');
    await page.getByTestId('schedule-description').filter({ hasText: 'At 07:30 (Europe/Berlin)' }).waitFor();

    // the client's own checks first: nothing is sent without a name and prompt, or with a budget of 0
    await page.getByTestId('automation-budget-usd').fill('0');
    await page.getByTestId('automation-save').click();
    await page.getByTestId('automation-name-error').filter({ hasText: 'Required' }).waitFor();
    await page.getByTestId('automation-budget-error').filter({ hasText: 'above 0' }).waitFor();
    assert.equal((await rest('GET', '/api/automations')).body.automations.length, 0);

    await page.getByTestId('automation-name').fill('Morning brief');
    await page.getByTestId('automation-prompt').fill('Summarise what is new.');
    await page.getByTestId('automation-budget-usd').fill('0.5');
    await page.getByTestId('automation-model').selectOption('openai_compatible/fake-model');
    await page.getByTestId('automation-chat-mode').selectOption('single');
    await screenshot(page, 'automations-01-editor');
    await page.getByTestId('automation-save').click();

    const row = page.getByTestId('automation-row').filter({ hasText: 'Morning brief' });
    await row.waitFor();
    assert.equal(await editor.count(), 0);
    assert.equal((await row.getByTestId('automation-schedule-words').textContent()).trim(), 'At 07:30 (Europe/Berlin)');
    assert.match(await row.getByTestId('automation-next-run').textContent(), /^Next run: \w{3}, /);
    const stored = (await rest('GET', '/api/automations')).body.automations;
    assert.equal(stored.length, 1);
    assert.deepEqual(stored[0].schedule, { kind: 'cron', expression: '30 7 * * *', timezone: 'Europe/Berlin' });
    assert.deepEqual(stored[0].llm, { provider: 'openai_compatible', model: 'fake-model' });
    assert.deepEqual(stored[0].budget, { usd: 0.5 });
    assert.equal(stored[0].approvals, 'deny');
    assert.equal(stored[0].max_run_seconds, 600);
  });

  test('Scenario: run now runs the automation, the history shows the run with its cost, and its chat opens', async () => {
    fake.enqueue({ content: 'Nothing new today.', usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } });
    const row = page.getByTestId('automation-row').filter({ hasText: 'Morning brief' });
    await row.getByTestId('automation-run-now').click();
    // the automation_run event at the end of the run updates the row (and shows a snack bar: the tab is visible)
    await row.getByTestId('automation-last-outcome').filter({ hasText: 'Done' }).waitFor();
    await page.locator('mat-snack-bar-container').filter({ hasText: 'Automation “Morning brief” finished' }).waitFor();

    await row.getByTestId('automation-history').click();
    const run = row.getByTestId('automation-run');
    await run.waitFor();
    assert.equal(await run.count(), 1);
    assert.equal((await run.getByTestId('automation-run-outcome').textContent()).trim(), 'Done');
    // (1000 × $1 + 500 × $2) / 1e6
    assert.equal((await run.getByTestId('automation-run-cost').textContent()).trim(), '$0.002');
    await screenshot(page, 'automations-02-history');

    const [stored] = (await rest('GET', `/api/automations/${(await row.getAttribute('data-automation-id'))}/runs`)).body.runs;
    assert.equal(stored.outcome, 'ok');
    // the run's chat is in the sidebar's history too
    await page.locator(`[data-testid="session-row"][data-chat-id="${stored.chat_id}"]`).waitFor();
    await run.getByTestId('automation-run-chat').click();
    await page.waitForURL(`**/chat/${encodeURIComponent(stored.chat_id)}`);
    await page.getByTestId('assistant-text').filter({ hasText: 'Nothing new today.' }).waitFor();
    await screenshot(page, 'automations-03-chat');
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: an automation the agent proposes is shown on its approval card and, once allowed, on the page', async () => {
    const proposal = {
      name: 'Daily digest',
      prompt: 'Summarise the news of the day.',
      schedule: { kind: 'cron', expression: '0 7 * * *', timezone: 'UTC' },
      tools: ['web_search'],
    };
    fake.enqueue({ toolCalls: [{ name: 'schedule_task', arguments: JSON.stringify(proposal) }] }, { content: 'The digest is scheduled.' });
    await page.getByTestId('new-chat').click();
    await typeAndSend(page, 'Send me a daily digest at 7.');
    const card = page.getByTestId('approval-card');
    await card.getByTestId('approval-automation').waitFor();
    assert.match(await card.getByTestId('approval-automation').textContent(), /The agent proposes the automation “Daily digest”/);
    assert.equal((await card.getByTestId('approval-automation-schedule').textContent()).trim(), 'At 07:00 (UTC)');
    assert.equal(await card.getByTestId('approval-automation-prompt').textContent(), 'Summarise the news of the day.');
    assert.match(await card.getByTestId('approval-risk').textContent(), /Scheduling an automation/);
    // nothing exists before the owner decides
    assert.equal((await rest('GET', '/api/automations')).body.automations.length, 1);
    await screenshot(page, 'automations-04-proposal');
    await card.getByTestId('approval-allow-once').click();
    await page.getByTestId('assistant-text').filter({ hasText: 'The digest is scheduled.' }).waitFor();

    await page.getByTestId('nav-automations').click();
    const row = page.getByTestId('automation-row').filter({ hasText: 'Daily digest' });
    await row.waitFor();
    assert.equal((await row.getByTestId('automation-schedule-words').textContent()).trim(), 'At 07:00 (UTC)');
    await row.getByText('Proposed by the agent').waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
