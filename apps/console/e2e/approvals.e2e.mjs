// Browser e2e of approvals in the console (openspec/specs/console/spec.md, "Approval cards" and "Tools & approvals
// settings"): the built API serving the built console, the fake model server scripted to call `exec` (whose default
// policy is ask), Debian Chromium through playwright-core. Deny, allow once, always allow and revoke, the card after a
// reload, and a policy change in Settings. Scenarios run in order on one server and one chat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, connected, eventually, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

describe('Approvals in the console', { timeout: 300_000 }, () => {
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
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-approvals' }, ollama: { base_url: '' } }),
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

  const lastAnswer = () => page.getByTestId('assistant-text').last();
  const pendingCard = () => page.locator('cc-approval-card[data-state="pending"]');
  const cards = () => page.locator('cc-approval-card');
  const execCall = (command, content) => [{ toolCalls: [{ name: 'exec', arguments: JSON.stringify({ command }) }] }, { content }];

  async function sendMessage(text) {
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  async function waitForTurnEnd() {
    await page.getByTestId('send-button').waitFor({ state: 'visible' });
  }

  const activeTestId = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);

  async function tabTo(testId, maxPresses = 8) {
    for (let i = 0; i < maxPresses; i++) {
      if ((await activeTestId()) === testId) return;
      await page.keyboard.press('Tab');
    }
    assert.equal(await activeTestId(), testId, `Tab reaches ${testId}`);
  }

  async function toggleTheme(dark) {
    await page.getByTestId('theme-toggle').click();
    await page.waitForFunction((wanted) => document.documentElement.classList.contains('cc-dark') === wanted, dark);
  }

  async function setLanguage(label) {
    await page.getByTestId('language-button').click();
    await page.getByRole('menuitem', { name: label }).click();
  }

  test('Scenario: deny an exec call from the approval card (focus on the card, keyboard only)', async () => {
    const command = 'rm -rf ./build && echo "cleaned the build directory and every cache we could find on the way"';
    fake.enqueue(...execCall(command, 'I did not run the command.'));
    await page.goto(api.url);
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await sendMessage('Clean the build directory');

    const card = pendingCard();
    await card.waitFor();
    assert.equal(await activeTestId(), 'approval-card', 'focus moved to the card when it appeared');
    assert.equal(await card.getByTestId('approval-tool').innerText(), 'exec');
    assert.match(await card.getByTestId('approval-risk').innerText(), /Exec/);
    assert.equal(await card.getByTestId('approval-arguments').innerText(), command, 'the full command, not cut');
    // the card says what the server says: sandboxed where bubblewrap works (CI installs it), else UNCONFINED
    const health = await (await fetch(`${api.url}/api/health`)).json();
    const confined = health.exec_sandbox?.active === true;
    assert.equal(await card.getByTestId('approval-sandbox').getAttribute('data-sandbox'), confined ? 'sandboxed' : 'unconfined');
    if (!confined) assert.match(await card.getByTestId('approval-sandbox').innerText(), /UNCONFINED/);
    assert.match(await card.getByTestId('approval-countdown').innerText(), /Denied automatically in \d+:\d\d/);
    // two programs in one line: no standing rule can cover it, so no "Always allow"
    await card.getByTestId('approval-no-rule').waitFor();
    assert.equal(await card.getByTestId('approval-allow-always').count(), 0);
    await screenshot(page, 'approvals-01-card-light-en');

    await tabTo('approval-deny');
    await page.keyboard.press('Enter');
    await card.waitFor({ state: 'detached' });
    const settled = cards().last();
    assert.equal(await settled.getAttribute('data-outcome'), 'deniedByUser');
    assert.equal(await settled.getByTestId('approval-outcome').innerText(), 'Denied by you');
    await lastAnswer().filter({ hasText: 'I did not run the command.' }).waitFor();
    await waitForTurnEnd();
    assert.equal(await page.getByTestId('tool-block').count(), 0, 'a denied call never ran');
    const toolMessage = fake.completions[1].body.messages.find((message) => message.role === 'tool');
    assert.match(toolMessage.content, /denied/i, 'the model was told the call was denied');
    await toggleTheme(true);
    await screenshot(page, 'approvals-02-denied-dark-en');
    await toggleTheme(false);
  });

  test('Scenario: allow once runs the call; the sidebar marks the waiting chat (zh-CN and dark card)', async () => {
    fake.enqueue(...execCall('git --version', 'Git is installed.'));
    await sendMessage('Which git version is installed?');
    const card = pendingCard();
    await card.waitFor();
    const badge = page.locator('[data-testid="session-row"].cc-active [data-testid="session-awaiting-approval"]');
    await badge.waitFor();
    assert.equal(await badge.getAttribute('aria-label'), 'Waiting for your approval');

    await setLanguage('简体中文');
    await card.getByRole('button', { name: '允许一次' }).waitFor();
    await card.getByRole('button', { name: '始终允许 git' }).waitFor();
    await screenshot(page, 'approvals-03-card-light-zh-cn');
    await toggleTheme(true);
    await screenshot(page, 'approvals-04-card-dark-zh-cn');
    await toggleTheme(false);
    await setLanguage('English');

    await card.getByTestId('approval-allow-once').focus();
    await page.keyboard.press('Space');
    await card.waitFor({ state: 'detached' });
    assert.equal(await cards().last().getByTestId('approval-outcome').innerText(), 'Allowed once');
    const block = page.locator('cc-tool-block[data-status="ok"]').last();
    await block.waitFor();
    await lastAnswer().filter({ hasText: 'Git is installed.' }).waitFor();
    await waitForTurnEnd();
    await badge.waitFor({ state: 'detached' });
    await block.locator('.cc-tool-head').click();
    assert.match(await block.getByTestId('tool-result').innerText(), /git version/);
  });

  test('Scenario: after a reload the pending approval is shown again, once', async () => {
    fake.enqueue(...execCall('git --version', 'Asked after the reload.'));
    await sendMessage('Check git again');
    await pendingCard().waitFor();
    await page.reload();
    await connected(page).waitFor();
    const card = pendingCard();
    await card.waitFor();
    // the server re-sends the pending request on attach: deduplicated by call_id
    await page.waitForTimeout(500);
    assert.equal(await pendingCard().count(), 1);
    assert.equal(await card.getByTestId('approval-arguments').innerText(), 'git --version');
    await card.getByTestId('approval-deny').click();
    await card.waitFor({ state: 'detached' });
    await lastAnswer().filter({ hasText: 'Asked after the reload.' }).waitFor();
    await waitForTurnEnd();
  });

  test('Scenario: always allow stores a rule for the exact git command; the next call runs without asking; Revoke asks again', async () => {
    fake.enqueue(...execCall('git --version', 'Always allowed.'));
    await sendMessage('Always allow git for me');
    const card = pendingCard();
    await card.waitFor();
    await card.getByRole('button', { name: 'Always allow git --version' }).click();
    await card.waitFor({ state: 'detached' });
    assert.equal(await cards().last().getByTestId('approval-outcome').innerText(), 'Always allowed: git --version');
    await lastAnswer().filter({ hasText: 'Always allowed.' }).waitFor();
    await waitForTurnEnd();
    const { rules } = await (await fetch(`${api.url}/api/settings/tool-policies`)).json();
    // git can run other code through its options: the rule names the exact command
    assert.deepEqual(rules.map((rule) => rule.scope), [{ kind: 'exec_command', argv: ['git', '--version'] }]);

    // the next git call runs at once
    const before = await cards().count();
    const blocks = await page.locator('cc-tool-block[data-status="ok"]').count();
    fake.enqueue(...execCall('git --version', 'Ran without asking.'));
    await sendMessage('And once more');
    await lastAnswer().filter({ hasText: 'Ran without asking.' }).waitFor();
    await waitForTurnEnd();
    assert.equal(await cards().count(), before, 'no approval card for a call a rule allows');
    assert.equal(await page.locator('cc-tool-block[data-status="ok"]').count(), blocks + 1);

    // Settings → Tools & approvals: the rule, the audit log, the sandbox state; Revoke
    await page.getByTestId('nav-tools').click();
    await page.waitForURL(/\/settings\/tools$/);
    const rule = page.getByTestId('tools-rule-row');
    await rule.getByTestId('tools-rule-scope').filter({ hasText: 'exec of exactly git --version' }).waitFor();
    await page.getByTestId('tools-audit-row').first().waitFor();
    const decisions = await page
      .locator('[data-testid="tools-audit-row"][data-by="user"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-decision')));
    assert.deepEqual(decisions, ['allow_always', 'deny', 'allow_once', 'deny'], 'the user’s decisions, newest first');
    await page.getByTestId('tools-tool-row').filter({ hasText: 'exec' }).first().waitFor();
    // the sandbox card shows the state, or says that this server reports it only on the approval cards
    await page.getByTestId('tools-sandbox').locator('[data-testid="tools-sandbox-state"], [data-testid="tools-sandbox-unreported"]').waitFor();
    await screenshot(page, 'approvals-05-settings-light-en');
    await page.getByTestId('tools-rules').scrollIntoViewIfNeeded();
    await toggleTheme(true);
    await screenshot(page, 'approvals-06-settings-rules-dark-en');
    await page.getByTestId('tools-audit').scrollIntoViewIfNeeded();
    await screenshot(page, 'approvals-07-settings-audit-dark-en');
    await toggleTheme(false);
    await rule.getByRole('button', { name: 'Revoke the rule for exec of exactly git --version' }).click();
    await page.getByTestId('tools-rules-empty').waitFor();
    const after = await (await fetch(`${api.url}/api/settings/tool-policies`)).json();
    assert.deepEqual(after.rules, []);

    // back in the chat, git asks again
    await page.locator('[data-testid="session-row"]').first().locator('.cc-session-open').click();
    await page.waitForURL(new RegExp(`^${api.url}/chat/[^/]+$`));
    fake.enqueue(...execCall('git --version', 'Asked again.'));
    await sendMessage('git once more, please');
    const again = pendingCard();
    await again.waitFor();
    await again.getByTestId('approval-allow-once').click();
    await lastAnswer().filter({ hasText: 'Asked again.' }).waitFor();
    await waitForTurnEnd();
  });

  test('Scenario: a policy changed in Tools & approvals is saved at once', async () => {
    await page.getByTestId('nav-tools').click();
    await page.waitForURL(/\/settings\/tools$/);
    const row = page.locator('[data-testid="tools-tool-row"][data-tool="exec"]');
    await row.locator('mat-select').click();
    await page.getByRole('option', { name: 'Deny' }).click();
    await page.locator('mat-snack-bar-container').filter({ hasText: 'Saved' }).waitFor();
    let stored = await (await fetch(`${api.url}/api/settings/tool-policies`)).json();
    assert.equal(stored.tools.exec, 'deny');
    // reopen only once the saved state is rendered and the select is enabled again (it is disabled while saving, and
    // an options panel opened meanwhile is closed and rebuilt under the click)
    await row.locator('mat-select[data-policy="deny"][aria-disabled="false"]').waitFor();
    await page.locator('.cdk-overlay-pane mat-option').first().waitFor({ state: 'detached' });
    await row.locator('mat-select').click();
    await page.getByRole('option', { name: /^Default/ }).click();
    await row.locator('mat-select[data-policy="inherit"]').waitFor();
    await eventually(async () => {
      stored = await (await fetch(`${api.url}/api/settings/tool-policies`)).json();
      assert.equal(stored.tools.exec, undefined);
    });
  });

  test('the console raised no uncaught errors during the scenarios', () => {
    assert.deepEqual(pageErrors, []);
  });
});
