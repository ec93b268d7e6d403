// Browser e2e of a chat while its answer streams (openspec/specs/console/spec.md "Requirement: Replay after a reload"):
// the built API serving the built console, Debian Chromium through playwright-core, the fake model streaming slowly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi, typeAndSend } from './support/harness.mjs';

const TIMEOUT = 20_000;

/** A long answer in many small chunks, streamed slowly enough to reload (or type) in the middle of it. */
function slowAnswer(words, chunkDelayMs = 150) {
  const chunks = words.map((word, index) => (index === 0 ? word : ` ${word}`));
  return { step: { chunks, chunkDelayMs }, text: chunks.join('') };
}

describe('Chat while streaming', { timeout: 240_000 }, () => {
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
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-e2e-live' }, ollama: { base_url: '' } }),
    });
    assert.equal(saved.status, 200);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await fake?.close();
  });

  async function openPage() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return { context, page };
  }

  async function newChatAndSend(page, text) {
    await page.goto(api.url);
    await page.getByTestId('new-chat').click();
    await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
    await page.getByTestId('send-button').waitFor();
    await typeAndSend(page, text);
  }

  test('Scenario: a reload during a streaming answer shows the user message and the whole answer, which keeps streaming', async () => {
    const { context, page } = await openPage();
    try {
      const words = Array.from({ length: 30 }, (_, i) => `word${i + 1}`);
      const answer = slowAnswer(words, 150);
      fake.enqueue({ content: 'A first answer.' }, answer.step);
      await newChatAndSend(page, 'First question');
      await page.getByTestId('assistant-text').filter({ hasText: 'A first answer.' }).waitFor();
      await page.getByTestId('send-button').waitFor();
      await page.getByTestId('composer-input').fill('Tell me a long story');
      await page.getByTestId('composer-input').press('Enter');
      // reload once a few words have streamed
      await page.getByTestId('assistant-text').filter({ hasText: 'word4' }).waitFor();
      await page.reload();
      // right after the reload: the user message of the running turn and the answer from its first word
      await page.getByTestId('user-message').filter({ hasText: 'Tell me a long story' }).waitFor();
      const streaming = page.getByTestId('assistant-text').filter({ hasText: 'word1 word2 word3 word4' });
      await streaming.waitFor();
      assert.doesNotMatch(await streaming.innerText(), /word30/, 'still streaming after the reload');
      await page.getByTestId('stop-button').waitFor();
      await screenshot(page, 'chat-live-01-reload-mid-stream');
      // the answer keeps streaming to its end, shown once, after the earlier turn
      await page.getByTestId('assistant-text').filter({ hasText: 'word30' }).waitFor();
      await page.getByTestId('send-button').waitFor();
      const texts = await page.getByTestId('assistant-text').allInnerTexts();
      assert.deepEqual(texts.map((text) => text.trim()), ['A first answer.', answer.text]);
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'Tell me a long story' }).count(), 1);
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'First question' }).count(), 1);
      await screenshot(page, 'chat-live-02-reload-answer-complete');
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: Stop works on an answer replayed after a reload', async () => {
    const { context, page } = await openPage();
    try {
      const words = Array.from({ length: 60 }, (_, i) => `part${i + 1}`);
      fake.enqueue(slowAnswer(words, 150).step);
      await newChatAndSend(page, 'Another long story');
      await page.getByTestId('assistant-text').filter({ hasText: 'part3' }).waitFor();
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'part1 part2 part3' }).waitFor();
      await page.getByTestId('stop-button').click();
      await page.getByTestId('stopped-marker').waitFor();
      await page.getByTestId('send-button').waitFor();
      const text = await page.getByTestId('assistant-text').innerText();
      assert.match(text, /^part1 part2 part3/);
      assert.doesNotMatch(text, /part60/);
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'Another long story' }).count(), 1);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: the model\'s reasoning is shown collapsed above the answer, live and after a reload', async () => {
    const { context, page } = await openPage();
    try {
      fake.enqueue({ reasoning: 'The user asks for a sum; two plus two is four.', content: 'The answer is 4.', chunkDelayMs: 40 });
      await newChatAndSend(page, 'What is 2+2?');
      const answer = page.getByTestId('assistant-text').filter({ hasText: 'The answer is 4.' });
      await answer.waitFor();
      await page.getByTestId('send-button').waitFor();
      const block = page.getByTestId('reasoning');
      await block.waitFor();
      // collapsed: the summary shows, the reasoning text does not, and it is not part of the answer
      assert.equal(await block.getAttribute('open'), null);
      assert.equal(await page.getByTestId('reasoning-text').isVisible(), false);
      assert.doesNotMatch(await answer.innerText(), /two plus two/);
      assert.equal((await block.locator('summary').innerText()).trim(), 'Reasoning');
      await block.locator('summary').click();
      assert.equal((await page.getByTestId('reasoning-text').innerText()).trim(), 'The user asks for a sum; two plus two is four.');
      await screenshot(page, 'chat-live-reasoning-open');
      // after a reload: still there, collapsed again
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'The answer is 4.' }).waitFor();
      await page.getByTestId('reasoning').waitFor();
      assert.equal(await page.getByTestId('reasoning').getAttribute('open'), null);
      assert.equal(await page.getByTestId('reasoning-text').isVisible(), false);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  /** Sends the first message of a new chat and waits for its answer and its URL. */
  async function chatWithAnswer(page, question, answer) {
    fake.enqueue({ content: answer });
    await page.getByTestId('new-chat').click();
    await page.getByTestId('send-button').waitFor();
    await page.getByTestId('composer-input').fill(question);
    await page.getByTestId('composer-input').press('Enter');
    await page.getByTestId('assistant-text').filter({ hasText: answer }).waitFor();
    await page.waitForURL(/\/chat\/[^/]+$/);
    return new URL(page.url()).pathname.split('/').pop();
  }

  test('Scenario: a URL per chat: a deep link, back and forward, and a reload on /chat/<id>', async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(api.url);
      await page.getByTestId('model-select').filter({ hasText: 'fake-model' }).waitFor();
      const first = await chatWithAnswer(page, 'Question about apples', 'Apples are red.');
      const second = await chatWithAnswer(page, 'Question about pears', 'Pears are green.');
      assert.notEqual(first, second);
      assert.equal(new URL(page.url()).pathname, `/chat/${second}`);

      // back: the first chat; forward: the second one
      await page.goBack();
      await page.waitForURL(`**/chat/${first}`);
      await page.getByTestId('assistant-text').filter({ hasText: 'Apples are red.' }).waitFor();
      assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'Pears are green.' }).count(), 0);
      await page.goForward();
      await page.waitForURL(`**/chat/${second}`);
      await page.getByTestId('assistant-text').filter({ hasText: 'Pears are green.' }).waitFor();

      // selecting a chat in the sidebar navigates to it
      await page.getByTestId('session-row').filter({ hasText: 'Question about apples' }).click();
      await page.waitForURL(`**/chat/${first}`);
      await page.getByTestId('assistant-text').filter({ hasText: 'Apples are red.' }).waitFor();

      // a reload on /chat/<id> stays on that chat
      await page.reload();
      await page.getByTestId('assistant-text').filter({ hasText: 'Apples are red.' }).waitFor();
      assert.equal(new URL(page.url()).pathname, `/chat/${first}`);
      await screenshot(page, 'chat-live-03-url-per-chat');

      // a deep link in a new tab (a full page load) opens that chat
      const other = await context.newPage();
      other.setDefaultTimeout(TIMEOUT);
      await other.goto(`${api.url}/chat/${second}`);
      await other.getByTestId('assistant-text').filter({ hasText: 'Pears are green.' }).waitFor();
      assert.equal(await other.getByTestId('user-message').filter({ hasText: 'Question about pears' }).count(), 1);
      assert.equal(new URL(other.url()).pathname, `/chat/${second}`);
      await other.close();
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: an unknown chat id shows "not found" with a way to start a new chat', async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(`${api.url}/chat/no-such-chat-123`);
      const missing = page.getByTestId('chat-not-found');
      await missing.waitFor();
      assert.match(await missing.innerText(), /does not exist/);
      await screenshot(page, 'chat-live-04-chat-not-found');
      await page.getByTestId('chat-not-found-new').click();
      await page.waitForURL((url) => url.pathname === '/');
      await missing.waitFor({ state: 'detached' });
      await page.getByTestId('send-button').waitFor();
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: a message typed while an answer streams is queued, shown, and sent when the answer ends', async () => {
    const { context, page } = await openPage();
    try {
      const words = Array.from({ length: 20 }, (_, i) => `item${i + 1}`);
      const first = slowAnswer(words, 120);
      fake.enqueue(first.step, { content: 'The queued one is answered.' });
      await newChatAndSend(page, 'List twenty items');
      await page.getByTestId('assistant-text').filter({ hasText: 'item2' }).waitFor();
      const input = page.getByTestId('composer-input');
      assert.equal(await input.isEnabled(), true, 'the composer stays usable while the answer streams');
      await input.fill('Removed before sending');
      await input.press('Enter');
      await input.fill('And now the next question');
      await page.getByTestId('queue-button').click();
      const queued = page.getByTestId('queued-message');
      await queued.nth(1).waitFor();
      const shown = await queued.allInnerTexts();
      assert.equal(shown.length, 2);
      assert.match(shown[0], /Queued[\s\S]*Removed before sending/);
      assert.match(shown[1], /Queued[\s\S]*And now the next question/);
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'And now the next question' }).count(), 0);
      await screenshot(page, 'chat-live-05-queued-while-streaming');
      await queued.first().getByTestId('queued-remove').click();
      await page.getByTestId('queued-message').filter({ hasText: 'Removed before sending' }).waitFor({ state: 'detached' });
      // the answer ends: the queued message goes out by itself and gets its answer
      await page.getByTestId('assistant-text').filter({ hasText: 'The queued one is answered.' }).waitFor();
      await page.getByTestId('queued-messages').waitFor({ state: 'detached' });
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'And now the next question' }).count(), 1);
      assert.equal(await page.getByTestId('user-message').filter({ hasText: 'Removed before sending' }).count(), 0);
      const texts = await page.getByTestId('assistant-text').allInnerTexts();
      assert.deepEqual(texts.map((text) => text.trim()), [first.text, 'The queued one is answered.']);
      const last = fake.completions.at(-1);
      const users = last.body.messages.filter((message) => message.role === 'user').map((message) => message.content);
      assert.deepEqual(users, ['List twenty items', 'And now the next question']);
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });

  test('Scenario: Esc stops the running answer and the shortcuts dialog lists the shortcuts', async () => {
    const { context, page } = await openPage();
    try {
      fake.enqueue(slowAnswer(Array.from({ length: 60 }, (_, i) => `bit${i + 1}`), 150).step);
      await newChatAndSend(page, 'Something long');
      await page.getByTestId('assistant-text').filter({ hasText: 'bit2' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('stopped-marker').waitFor();
      await page.getByTestId('send-button').waitFor();
      assert.doesNotMatch(await page.getByTestId('assistant-text').innerText(), /bit60/);

      // ↑ in the empty composer puts the last user message back
      await page.getByTestId('composer-input').focus();
      await page.keyboard.press('ArrowUp');
      assert.equal(await page.getByTestId('composer-input').inputValue(), 'Something long');
      await page.getByTestId('composer-input').fill('');

      // Ctrl+K focuses the chat search
      await page.keyboard.press('Control+k');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'session-search');
      await page.getByTestId('session-search').blur();

      // `?` outside a text field opens the labelled help dialog; Esc closes it and gives focus back
      await page.locator('body').click({ position: { x: 5, y: 5 } }).catch(() => undefined);
      await page.evaluate(() => (document.activeElement instanceof HTMLElement ? document.activeElement.blur() : undefined));
      await page.keyboard.press('Shift+?');
      const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      await dialog.waitFor();
      assert.match(await dialog.getByTestId('shortcuts-list').innerText(), /New chat[\s\S]*Search chats[\s\S]*Stop the answer/);
      await screenshot(page, 'chat-live-06-shortcuts-dialog');
      // focus stays inside the dialog while it is open (once the dialog has taken it)
      await page.waitForFunction(() => document.querySelector('[role="dialog"]')?.contains(document.activeElement) === true);
      for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
      assert.equal(await dialog.evaluate((node) => node.contains(document.activeElement)), true);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // Ctrl+/ opens it too
      await page.keyboard.press('Control+/');
      await dialog.waitFor();
      await dialog.getByTestId('shortcuts-close').click();
      await dialog.waitFor({ state: 'detached' });

      // Ctrl+Shift+O starts a new chat at /
      await page.keyboard.press('Control+Shift+O');
      await page.waitForURL((url) => url.pathname === '/');
      await page.getByTestId('user-message').filter({ hasText: 'Something long' }).waitFor({ state: 'detached' });
      assert.deepEqual(pageErrors, []);
    } finally {
      await context.close();
    }
  });
});
