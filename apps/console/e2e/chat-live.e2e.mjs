// Browser e2e of a chat while its answer streams (openspec/specs/console/spec.md "Requirement: Replay after a reload"):
// the built API serving the built console, Debian Chromium through playwright-core, the fake model streaming slowly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakeModelServer } from './support/fake-model-server.mjs';
import { assertBuilt, launchBrowser, screenshot, startApi } from './support/harness.mjs';

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
    await page.getByTestId('composer-input').fill(text);
    await page.getByTestId('composer-input').press('Enter');
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
});
