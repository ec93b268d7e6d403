// Browser e2e of the sub-agent card (openspec/specs/console/spec.md "Requirement: Sub-agent card"): the fake model's
// answer delegates a task; the delegate call shows as a nested, collapsible card following the sub-agent live (its
// tool call, then its answer streaming), and after a reload the card, reopened, shows the stored transcript.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Sub-agent card', { timeout: 120_000 }, () => {
  let fake;
  let api;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-subagents' }, ollama: { base_url: '' } }),
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

  test('Scenario: a delegate call shows a nested card with live progress, and its transcript after a reload', async () => {
    fake.enqueue(
      // the parent delegates
      { toolCalls: [{ id: 'd1', name: 'delegate', arguments: JSON.stringify({ task: 'List the workspace', tools: ['list_dir'] }) }] },
      // the child lists the directory, then streams its answer slowly
      { toolCalls: [{ id: 'c1', name: 'list_dir', arguments: '{"path":"."}' }] },
      { chunks: ['The workspace ', 'is ', 'empty', ' so far.'], chunkDelayMs: 400 },
      // the parent answers
      { content: 'The sub-agent says the workspace is empty.' },
    );
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await typeAndSend(page, 'What is in the workspace?');

    const card = page.locator('cc-subagent-card[data-call-id="d1"]');
    await card.waitFor();
    // open while it runs: its tool call and its answer text arrive live, nested in the card
    await card.getByTestId('subagent-body').waitFor();
    assert.equal(await card.getByTestId('subagent-task').innerText(), 'List the workspace');
    await card.getByTestId('subagent-step').filter({ hasText: 'list_dir' }).waitFor();
    await card.getByTestId('subagent-text').filter({ hasText: 'The workspace' }).waitFor();
    assert.equal(await card.getAttribute('data-status'), 'running');
    await screenshot(page, 'subagents-01-live');
    // the child's calls are not blocks of the parent's answer
    assert.equal(await page.getByTestId('tool-block').count(), 0);

    await page.getByTestId('assistant-text').last().filter({ hasText: 'The sub-agent says the workspace is empty.' }).waitFor();
    await page.locator('cc-subagent-card[data-call-id="d1"][data-status="ok"]').waitFor();
    assert.equal(await card.getByTestId('subagent-text').innerText(), 'The workspace is empty so far.');
    // collapsible
    await card.getByTestId('subagent-toggle').click();
    await card.getByTestId('subagent-body').waitFor({ state: 'detached' });
    assert.equal(await card.getByTestId('subagent-toggle').getAttribute('aria-expanded'), 'false');

    // from history: closed, and opening it loads the stored transcript
    await page.reload();
    const again = page.locator('cc-subagent-card[data-call-id="d1"]');
    await again.waitFor();
    assert.equal(await again.getAttribute('data-status'), 'ok');
    assert.equal(await again.getByTestId('subagent-body').count(), 0);
    await again.getByTestId('subagent-toggle').click();
    await again.getByTestId('subagent-step').filter({ hasText: 'list_dir' }).waitFor();
    assert.equal(await again.getByTestId('subagent-text').innerText(), 'The workspace is empty so far.');
    assert.equal(await again.getByTestId('subagent-task').innerText(), 'List the workspace');
    await screenshot(page, 'subagents-02-history');
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: an approval card of a sub-agent names it, and Allow once lets its command run', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'd2', name: 'delegate', arguments: JSON.stringify({ task: 'Leave a marker file', tools: ['exec'] }) }] },
      { toolCalls: [{ id: 'x1', name: 'exec', arguments: JSON.stringify({ command: 'touch subagent-marker.txt' }) }] },
      { content: 'Marker left.' },
      { content: 'The sub-agent left the marker.' },
    );
    await page.getByTestId('new-chat').click();
    await typeAndSend(page, 'Leave a marker');
    const card = page.locator('cc-approval-card[data-state="pending"]');
    await card.waitFor();
    assert.equal(await card.getByTestId('approval-tool').innerText(), 'exec');
    assert.equal(await card.getByTestId('approval-subagent').innerText(), 'Asked by a sub-agent working on: Leave a marker file');
    await screenshot(page, 'subagents-03-approval');
    await card.getByTestId('approval-allow-once').click();
    await page.getByTestId('assistant-text').last().filter({ hasText: 'The sub-agent left the marker.' }).waitFor();
    assert.equal(existsSync(join(api.dir, 'data', 'workspace', 'subagent-marker.txt')), true);
    const nested = page.locator('cc-subagent-card[data-call-id="d2"][data-status="ok"]');
    await nested.getByTestId('subagent-step').filter({ hasText: 'exec' }).waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
