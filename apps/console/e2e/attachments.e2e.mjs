// Browser e2e of composer attachments (openspec/specs/console/spec.md "Requirement: Composer attachments",
// openspec/specs/chat/spec.md "Requirement: Image attachments"): the built API serving the built console, Debian
// Chromium through playwright-core, the fake model recording what it got.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

const TIMEOUT = 20_000;
// a PNG signature followed by filler: the server sniffs the type from these bytes
const PNG_BASE64 = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('e2e image')]).toString('base64');

describe('Composer attachments', { timeout: 180_000 }, () => {
  let api;
  let fake;
  let browser;
  const pageErrors = [];

  before(async () => {
    assertBuilt();
    fake = await FakeModelServer.start();
    api = await startApi();
    const saved = await fetch(`${api.url}/api/settings/llm`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-attachments' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  test('Scenario: Attachment chips of a sent message stay after a reload', async () => {
    // also covers "Scenario: The LLM settings toggle marks a model as taking images" end to end
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      // mark the model as taking images in the LLM settings
      await page.goto(`${api.url}/settings/llm`);
      const toggle = page.locator('[data-testid="image-model-toggle"][data-model="fake-model"]');
      const marked = page.waitForResponse((response) => response.url().endsWith('/api/settings/llm/image-models') && response.status() === 200);
      await toggle.getByRole('switch').click();
      await marked;
      assert.equal(await toggle.getByRole('switch').getAttribute('aria-checked'), 'true');
      await screenshot(page, 'attachments-00-image-model-toggle');

      await page.goto(api.url);
      await page.getByTestId('new-chat').click();
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      await page.getByRole('button', { name: 'Attach files' }).waitFor();
      // the picker marks the model
      await page.getByTestId('model-select').click();
      await page.getByRole('option', { name: /fake-model/ }).getByTestId('model-accepts-images').waitFor();
      await page.keyboard.press('Escape');

      await page.getByTestId('attachment-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('line one\n') });
      await page.getByTestId('attachment-chip').filter({ hasText: 'notes.txt' }).and(page.locator('[data-status="done"]')).waitFor();
      // paste a screenshot (an image without a name) into the text box
      await page.getByTestId('composer-input').evaluate((element, base64) => {
        const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], '', { type: 'image/png' }));
        element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
      }, PNG_BASE64);
      await page.getByTestId('attachment-chip').filter({ hasText: 'pasted-1.png' }).and(page.locator('[data-status="done"]')).waitFor();
      await screenshot(page, 'attachments-01-composer-chips');

      fake.enqueue({ content: 'Got both files.' });
      await page.getByTestId('composer-input').fill('What do you see?');
      await page.getByTestId('composer-input').press('Enter');
      await page.getByTestId('assistant-text').filter({ hasText: 'Got both files.' }).waitFor();
      // the composer's chips are gone, the message shows them
      assert.equal(await page.getByTestId('composer').getByTestId('attachment-chip').count(), 0);
      const messageChips = page.getByTestId('message-list').getByTestId('attachment-name');
      assert.deepEqual(await messageChips.allInnerTexts(), ['notes.txt', 'pasted-1.png']);

      // the model got the text reference and the pasted image as an image part
      const body = fake.completions.at(-1).body;
      const user = body.messages.filter((message) => message.role === 'user').at(-1);
      assert.ok(Array.isArray(user.content));
      assert.match(user.content[0].text, /^What do you see\?\n\n\[Attached files \(paths relative to the workspace\): attachments\/.+\/notes\.txt \(text\/plain, 9 bytes\); attachments\/.+\/pasted-1\.png \(image\/png/);
      assert.deepEqual(user.content.slice(1), [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }]);

      await page.reload();
      await page.getByTestId('user-message').filter({ hasText: 'What do you see?' }).waitFor();
      await page.getByTestId('message-list').getByTestId('attachment-name').first().waitFor();
      assert.deepEqual(await page.getByTestId('message-list').getByTestId('attachment-name').allInnerTexts(), ['notes.txt', 'pasted-1.png']);
      await screenshot(page, 'attachments-02-after-reload');
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });
});
