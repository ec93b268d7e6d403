// Browser e2e of the Skill Market (openspec/specs/skills/spec.md and openspec/specs/console/spec.md, console part):
// the built API serving the built console, a Skill ZIP built in the test, Debian Chromium through playwright-core.
// Scenarios run in order on one server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';
import { SKILL_MARKER, SKILL_NAME, skillMarkdown, skillZip, zipFiles } from './support/skill-zip.mjs';

const TIMEOUT = 20_000;

describe('Skill Market', { timeout: 180_000 }, () => {
  let api;
  let browser;
  let page;
  let zip;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    zip = await skillZip();
    api = await startApi();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
  });

  const row = () => page.getByTestId(`skill-row-${SKILL_NAME}`);
  const editor = () => page.getByTestId('skill-editor-text');

  async function rest(method, path, body) {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async function upload(name, buffer = zip) {
    await page.getByTestId('skill-upload').click();
    await page.getByTestId('skill-upload-input').setInputFiles({ name, mimeType: 'application/zip', buffer });
    await page.getByTestId('skill-upload-drop').filter({ hasText: name }).waitFor();
    await page.getByTestId('skill-upload-submit').click();
  }

  test('Scenario: uploading a Skill ZIP adds it to the market', async () => {
    await page.goto(`${api.url}/skills`);
    await page.getByTestId('skill-row-weather').waitFor(); // built-ins are listed
    assert.equal(await row().count(), 0);
    await upload(`${SKILL_NAME}.zip`);
    await row().waitFor();
    assert.match(await row().innerText(), /E2E Notes/);
    assert.match(await row().innerText(), /Uploaded/);
    assert.match(await row().getByTestId('skill-status').innerText(), /Available/);
    const stored = await rest('GET', `/api/skills/${SKILL_NAME}/content`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.content, skillMarkdown());
    await screenshot(page, 'skills-01-uploaded');
  });

  test('Scenario: an upload the API rejects shows its error (name taken → 409)', async () => {
    await upload('again.zip');
    const error = page.getByTestId('skill-upload-error');
    await error.waitFor();
    assert.match(await error.innerText(), new RegExp(`Skill already exists in user: ${SKILL_NAME}`));
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  const tinySkill = (name) => `---\nname: ${name}\ndescription: The ${name} test Skill.\n---\n\n# ${name}\n\nDo it.\n`;

  test('Scenario: a .skill archive with several Skills shows a checklist and imports the checked ones', async () => {
    const archive = await zipFiles({
      'repo-main/README.md': '# Skills\n',
      'repo-main/skills/e2e-alpha/SKILL.md': tinySkill('e2e-alpha'),
      'repo-main/skills/e2e-beta/SKILL.md': tinySkill('e2e-beta'),
    });
    await upload('repo-main.skill', archive);
    const list = page.getByTestId('skill-upload-candidates');
    await list.waitFor();
    assert.match(await list.innerText(), /repo-main\/skills\/e2e-alpha/);
    await screenshot(page, 'skills-04-archive-checklist');
    await page.getByTestId('skill-upload-candidate-e2e-beta').check();
    await page.getByTestId('skill-upload-submit').click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByTestId('skill-row-e2e-beta').waitFor();
    assert.equal((await rest('GET', '/api/skills/e2e-beta/content')).body.content, tinySkill('e2e-beta'));
    assert.equal((await rest('GET', '/api/skills/e2e-alpha')).status, 404);
  });

  test('Scenario: a Skill named like a built-in is imported only after confirming the replacement', async () => {
    const archive = await zipFiles({ 'weather/SKILL.md': tinySkill('weather') });
    await upload('weather.zip', archive);
    await page.getByTestId('skill-upload-error').waitFor();
    const confirm = page.getByTestId('skill-upload-replace');
    await confirm.waitFor();
    assert.equal((await rest('GET', '/api/skills/weather')).body.source, 'builtin', 'nothing replaced before the confirmation');
    await confirm.getByRole('checkbox').check();
    await page.getByTestId('skill-upload-submit').click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByTestId('skill-row-weather').getByTestId('skill-shadows-builtin').waitFor();
    const replaced = await rest('GET', '/api/skills/weather');
    assert.deepEqual([replaced.body.source, replaced.body.shadows_builtin], ['user', true]);
    await screenshot(page, 'skills-05-shadows-builtin');
    assert.equal((await rest('DELETE', '/api/skills/weather')).status, 204);
    assert.equal((await rest('GET', '/api/skills/weather')).body.source, 'builtin');
  });

  test('Scenario: a save after a concurrent change gets 409, keeps the draft and offers reload', async () => {
    await row().getByTestId('skill-edit').click();
    await page.getByTestId('skill-editor-valid').waitFor();
    const loaded = await rest('GET', `/api/skills/${SKILL_NAME}/content`);
    const draft = skillMarkdown(`${SKILL_MARKER}: the draft typed in the console.`);
    await editor().fill(draft);
    // someone else changes the Skill between load and save
    const concurrent = skillMarkdown(`${SKILL_MARKER}: changed through the REST API.`);
    const put = await rest('PUT', `/api/skills/${SKILL_NAME}`, { content: concurrent, expected_hash: loaded.body.hash });
    assert.equal(put.status, 200);
    await page.getByTestId('skill-editor-save').click();
    const conflict = page.getByTestId('skill-editor-conflict');
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /updated by another action/);
    assert.equal(await editor().inputValue(), draft, 'the draft is kept');
    assert.equal((await rest('GET', `/api/skills/${SKILL_NAME}/content`)).body.content, concurrent, 'nothing was overwritten');
    await screenshot(page, 'skills-02-conflict');
    // reload shows the other change; saving on top of it works
    await page.getByTestId('skill-editor-reload').click();
    await conflict.waitFor({ state: 'detached' });
    assert.equal(await editor().inputValue(), concurrent);
    await editor().fill(draft);
    await page.getByTestId('skill-editor-save').click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal((await rest('GET', `/api/skills/${SKILL_NAME}/content`)).body.content, draft);
  });

  test('Scenario: rollback restores a previous version', async () => {
    await row().getByTestId('skill-view').click();
    await editor().waitFor();
    assert.equal(await editor().inputValue(), skillMarkdown(`${SKILL_MARKER}: the draft typed in the console.`));
    const versions = page.getByTestId('skill-versions').getByTestId('skill-rollback');
    await versions.first().waitFor();
    assert.equal(await versions.count(), 2, 'one snapshot per replace: before the REST change and before the save');
    // newest first: the last entry is the uploaded original
    await versions.last().click();
    const confirm = page.getByRole('dialog').filter({ hasText: 'Restore version' });
    await confirm.getByRole('button', { name: 'Restore' }).click();
    await page.getByText(/Version .* restored\./).waitFor();
    assert.equal(await editor().inputValue(), skillMarkdown());
    assert.equal((await rest('GET', `/api/skills/${SKILL_NAME}/content`)).body.content, skillMarkdown());
    // the state before the rollback became a version of its own
    assert.equal(await versions.count(), 3);
    await screenshot(page, 'skills-03-rolled-back');
    await page.getByTestId('skill-editor-close').click();
    assert.deepEqual(pageErrors, []);
  });
  test('Scenario: closing the Skill editor with an unsaved draft asks first', async () => {
    const before = (await rest('GET', `/api/skills/${SKILL_NAME}/content`)).body.content;
    await row().getByTestId('skill-edit').click();
    await page.getByTestId('skill-editor-valid').waitFor();
    await editor().fill(skillMarkdown(`${SKILL_MARKER}: a draft that is never saved.`));
    await page.keyboard.press('Escape');
    const confirm = page.getByRole('dialog').filter({ hasText: 'Leave without saving?' });
    await confirm.waitFor();
    await screenshot(page, 'skills-04-unsaved-confirm');
    await confirm.getByRole('button', { name: 'Stay' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal(await editor().inputValue(), skillMarkdown(`${SKILL_MARKER}: a draft that is never saved.`), 'Stay keeps the draft');
    await page.keyboard.press('Escape');
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Leave' }).click();
    await editor().waitFor({ state: 'detached' });
    assert.equal((await rest('GET', `/api/skills/${SKILL_NAME}/content`)).body.content, before, 'nothing was saved');
    assert.deepEqual(pageErrors, []);
  });
  test('Scenario: importing a Skill with allowed-tools lists what it would pre-approve; Allow grants them', async () => {
    const name = 'e2e-shell';
    const archive = await zipFiles({
      [`${name}/SKILL.md`]: `---\nname: ${name}\ndescription: Runs shell commands.\nallowed-tools: Bash Read\n---\n\nRun what is needed.\n`,
    });
    await upload(`${name}.zip`, archive);
    const review = page.getByTestId('skill-upload-pre-approvals');
    await review.waitFor();
    assert.match(await page.getByRole('dialog').innerText(), /Allow these pre-approvals\?/);
    const items = await review.getByTestId('skill-upload-pre-item').allInnerTexts();
    assert.deepEqual(items, ['any shell command', 'tool read_file']);
    assert.match(await review.innerText(), /Warning: this lets the model run any shell command/);
    assert.equal((await rest('GET', `/api/skills/${name}`)).body.pre_approvals.granted, false, 'nothing granted before Allow');
    await screenshot(page, 'skills-05-pre-approvals-import');
    await page.getByTestId('skill-upload-pre-allow').click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    const panel = page.getByTestId(`skill-row-${name}`).getByTestId('skill-pre-approvals');
    await panel.filter({ hasText: 'Pre-approvals: allowed by you' }).waitFor();
    assert.equal((await rest('GET', `/api/skills/${name}`)).body.pre_approvals.granted, true);
    assert.deepEqual(pageErrors, []);
  });

  test('Scenario: a Skill the agent wrote shows its pre-approvals waiting for approval until the owner approves', async () => {
    const name = 'e2e-agent-made';
    const created = await rest('POST', '/api/skills', {
      name,
      source: 'agent',
      content: `---\nname: ${name}\ndescription: Written by the agent.\nallowed-tools: Bash(git:*)\n---\n\nUse git.\n`,
    });
    assert.equal(created.status, 201);
    await page.getByTestId('skill-refresh').click();
    const panel = page.getByTestId(`skill-row-${name}`).getByTestId('skill-pre-approvals');
    await panel.filter({ hasText: 'Pre-approvals: waiting for your approval' }).waitFor();
    assert.match(await panel.getByTestId('skill-pre-approval-item').innerText(), /commands starting with `git` \(this program can run any other command/);
    await screenshot(page, 'skills-06-pre-approvals-waiting');
    await panel.getByTestId('skill-pre-approvals-approve').click();
    await page.getByTestId(`skill-row-${name}`).getByTestId('skill-pre-approvals').filter({ hasText: 'allowed by you' }).waitFor();
    assert.equal((await rest('GET', `/api/skills/${name}`)).body.pre_approvals.granted, true);
    await page.getByTestId(`skill-row-${name}`).getByTestId('skill-pre-approvals-revoke').click();
    await page.getByTestId(`skill-row-${name}`).getByTestId('skill-pre-approvals').filter({ hasText: 'waiting for your approval' }).waitFor();
    assert.deepEqual(pageErrors, []);
  });
});
