// Browser e2e of the Evolution view (openspec/specs/skill-evolution/spec.md): the built API with
// SKILL_EVOLUTION_ENABLED=true serving the built console, the fake model server as the only model (two chat turns
// using tools, then the evolver's answer), Debian Chromium through playwright-core.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
const SKILL_MD = [
  '---',
  'name: weekly-report',
  'description: Build the weekly report from the workspace listing',
  '---',
  '',
  '# Weekly report',
  '1. List the workspace twice to compare.',
  '2. Summarise what changed.',
  '',
].join('\n');

/** Resolves with the proposals once `predicate` holds (the evolver runs after the turn, off its critical path). */
async function waitForProposals(url, predicate, timeoutMs = TIMEOUT) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await (await fetch(`${url}/api/skill-evolution/proposals`)).json();
    if (predicate(body.items)) return body;
    if (Date.now() > deadline) throw new Error(`proposals never matched: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Skill evolution view', { timeout: 180_000 }, () => {
  let fake;
  let api;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    // the harness passes this process's environment to the API
    process.env.SKILL_EVOLUTION_ENABLED = 'true';
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-evolution-key' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  /** One chat turn in the UI: the model lists the workspace twice, then answers; `after` steps are queued behind it. */
  async function turn(text, after = []) {
    fake.enqueue(
      { toolCalls: [{ name: 'list_dir', arguments: '{"path":"."}' }, { name: 'list_dir', arguments: '{"path":"."}' }] },
      { content: 'The weekly report is ready.' },
      ...after,
    );
    const answers = await page.getByTestId('assistant-text').count();
    await page.getByTestId('send-button').waitFor();
    await page.getByTestId('composer-input').fill(text);
    await page.getByTestId('composer-input').press('Enter');
    await page.getByTestId('assistant-text').nth(answers).filter({ hasText: 'The weekly report is ready.' }).waitFor();
    await page.getByTestId('send-button').waitFor({ state: 'visible' });
  }

  test('Scenario: an empty Evolution view explains what will appear', async () => {
    await page.goto(`${api.url}/evolution`);
    await page.getByTestId('evolution-empty').waitFor();
    assert.equal(await page.getByTestId('evolution-disabled').count(), 0, 'evolution is enabled on this server');
  });

  test('Scenario: a recurring workflow appears as a pending proposal with its candidate and evidence', async () => {
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await turn('Build the weekly report for week 1');
    // the evolver's answer (a non-streaming call without tools) is consumed after the second turn
    const reply = { action: 'create', name: 'weekly-report', candidate_content: SKILL_MD, reason: 'The weekly report recurs' };
    await turn('Build the weekly report for week 2', [{ content: JSON.stringify(reply) }]);
    await waitForProposals(api.url, (items) => items.length === 1);
    const evolver = fake.completions.at(-1).body;
    assert.equal(evolver.tools, undefined, 'the evolver gets no tools');
    assert.notEqual(evolver.stream, true);
    assert.ok((await page.getByTestId('tool-block').count()) >= 4, 'both turns show their two tool calls');

    await page.getByTestId('nav-evolution').click();
    await page.waitForURL(/\/evolution$/);
    const row = page.getByTestId('proposal-row').first();
    await row.getByTestId('proposal-name').filter({ hasText: 'weekly-report' }).waitFor();
    await row.getByTestId('proposal-status').filter({ hasText: 'Pending' }).waitFor();
    await row.getByTestId('proposal-review').click();
    const detail = row.getByTestId('proposal-detail');
    await detail.getByTestId('proposal-candidate').filter({ hasText: 'name: weekly-report' }).waitFor();
    const evidence = detail.getByTestId('proposal-evidence');
    await evidence.filter({ hasText: 'Build the weekly report for week 1' }).waitFor();
    await evidence.filter({ hasText: 'Build the weekly report for week 2' }).waitFor();
    assert.equal(await detail.getByTestId('proposal-validation-errors').count(), 0, 'the candidate is valid');
    assert.equal(await detail.getByTestId('proposal-diff').count(), 0, 'a new Skill has nothing to diff against');
    await screenshot(page, 'evolution-01-review');
  });

  test('Scenario: approving a proposal in the console creates an agent Skill', async () => {
    const row = page.getByTestId('proposal-row').first();
    await row.getByTestId('proposal-approve').click();
    await page.locator('[data-testid="proposal-row"][data-status="applied"]').waitFor();
    await row.getByTestId('proposal-status').filter({ hasText: 'Applied' }).waitFor();
    await row.getByTestId('proposal-applied-version').filter({ hasText: 'Created as version 1' }).waitFor();
    assert.equal(await row.getByTestId('proposal-approve').count(), 0, 'an applied proposal has no actions');
    await screenshot(page, 'evolution-02-applied');

    const skill = await (await fetch(`${api.url}/api/skills/weekly-report`)).json();
    assert.equal(skill.source, 'agent');
    assert.equal(skill.enabled, true);
    const { items } = await waitForProposals(api.url, (list) => list[0]?.status === 'applied');
    assert.equal(items[0].applied_version, '1');
  });

  test('Scenario: the Evolution view has no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
