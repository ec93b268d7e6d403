/**
 * Consolidation through the real gateway with the fake model (openspec memory): the summary record and
 * keep_from_cursor, a turn finishing during consolidation is kept, failure and timeout change nothing, and a restart
 * loads the last summary and the kept tail.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { CONSOLIDATION_SYSTEM_PROMPT } from '../src/memory/consolidator';
import { HistoryLogStore } from '../src/memory/history-log.store';
import {
  CONSOLIDATION_FINISHED_EVENT,
  type ConsolidationFinishedEvent,
  type ConsolidationOutcome,
} from '../src/events/app-events';
import { FakeModelServer, type FakeStep, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: string | null }>;
}

const bodyOf = (r: RecordedRequest): CompletionBody => r.body as CompletionBody;
const isSummaryRequest = (r: RecordedRequest) => bodyOf(r).messages[0]?.content === CONSOLIDATION_SYSTEM_PROMPT;
const LONG_A = 'a'.repeat(600);
const LONG_B = 'b'.repeat(600);

async function readHistory(t: TestApp, chatId: string): Promise<Array<Record<string, unknown>>> {
  const text = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Resolves with the next consolidation outcome of the chat (subscribe before triggering). */
function nextConsolidation(t: TestApp, chatId: string, outcome?: ConsolidationOutcome): Promise<ConsolidationFinishedEvent> {
  const events = t.app.get(EventEmitter2);
  return new Promise((resolve) => {
    const listener = (event: ConsolidationFinishedEvent) => {
      if (event.chatId !== chatId || (outcome && event.outcome !== outcome)) return;
      events.off(CONSOLIDATION_FINISHED_EVENT, listener);
      resolve(event);
    };
    events.on(CONSOLIDATION_FINISHED_EVENT, listener);
  });
}

describe('memory consolidation (e2e)', () => {
  let fake: FakeModelServer;
  /** summariser answers, consumed in order (turns use the fake's queue / default answer) */
  let summarySteps: FakeStep[];

  beforeAll(async () => {
    fake = await FakeModelServer.start();
  });

  afterAll(async () => {
    await fake.close();
  });

  beforeEach(() => {
    fake.reset();
    summarySteps = [];
    fake.setHandler((request) => (isSummaryRequest(request) ? (summarySteps.shift() ?? { content: 'summary' }) : undefined));
  });

  async function start(env: Record<string, string> = {}, dirs: { dataDir?: string; configDir?: string } = {}): Promise<TestApp> {
    const t = await startTestApp({
      env: { CASHCODE_CONSOLIDATION_THRESHOLD: '1000', DREAM_INTERVAL: '0', ...env },
      ...dirs,
    });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    return t;
  }

  async function turn(client: WsTestClient, chatId: string, content: string, answer = 'ok'): Promise<void> {
    fake.enqueue({ content: answer });
    const done = client.next('done', (e) => e.chat_id === chatId);
    const error = client.next('error', (e) => e.chat_id === chatId).then((e) => {
      throw new Error(`turn failed: ${e.detail}`);
    });
    client.sendMessage(chatId, content);
    await Promise.race([done, error]);
  }

  const turnRequests = () => fake.completions.filter((r) => bodyOf(r).stream === true);

  describe('with one app', () => {
    let t: TestApp;
    let client: WsTestClient;

    beforeAll(async () => {
      t = await start();
    });

    afterAll(async () => {
      await t.close();
    });

    beforeEach(async () => {
      client = await WsTestClient.connect(t.wsUrl);
    });

    afterEach(async () => {
      await client.close();
    });

    it('Scenario: a long chat gets a summary record with keep_from_cursor and the next turn sees summary + tail', async () => {
      const chatId = 'consolidate-1';
      const below = nextConsolidation(t, chatId);
      await turn(client, chatId, 'first question about apples', LONG_A);
      expect((await below).outcome).toBe('below_threshold');
      const before = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'));

      summarySteps.push({ content: 'The user asked about apples; the assistant answered at length.' });
      const consolidated = nextConsolidation(t, chatId);
      await turn(client, chatId, 'second question about pears', LONG_B);
      expect(await consolidated).toEqual({ chatId, outcome: 'consolidated', keepFromCursor: 3 });

      const records = await readHistory(t, chatId);
      expect(records.map((r) => [r['cursor'], r['role']])).toEqual([
        [1, 'user'],
        [2, 'assistant'],
        [3, 'user'],
        [4, 'assistant'],
        [5, 'summary'],
      ]);
      expect(records[4]).toMatchObject({
        content: 'The user asked about apples; the assistant answered at length.',
        keep_from_cursor: 3,
      });
      // append-only: the earlier bytes are untouched
      const after = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'));
      expect(after.subarray(0, before.length).equals(before)).toBe(true);

      // the summariser got the older part, with the turn's model, non-streaming, English instructions
      const summaryRequest = fake.completions.find(isSummaryRequest)!;
      const body = bodyOf(summaryRequest);
      expect(body.model).toBe('fake-model');
      expect(body.stream).toBeFalsy();
      expect(body.messages[1]?.content).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d\] USER: first question about apples\n/);
      expect(body.messages[1]?.content).not.toContain('pears');

      await turn(client, chatId, 'third question');
      const last = bodyOf(turnRequests().at(-1)!);
      expect(last.messages.slice(1)).toEqual([
        { role: 'assistant', content: '[History summary] The user asked about apples; the assistant answered at length.' },
        { role: 'user', content: 'second question about pears' },
        { role: 'assistant', content: LONG_B },
        { role: 'user', content: 'third question' },
      ]);
    });

    it('Scenario: a turn that completes during consolidation is kept, and a second consolidation is skipped as busy', async () => {
      const chatId = 'consolidate-2';
      await turn(client, chatId, 'q1', LONG_A);
      summarySteps.push({ content: 'S1', delayMs: 1000 });
      const consolidated = nextConsolidation(t, chatId, 'consolidated');
      await turn(client, chatId, 'q2', LONG_B);
      // wait until the summariser request is in flight, then finish another turn meanwhile
      await fake.waitForRequests(3);
      expect(isSummaryRequest(fake.completions[2]!)).toBe(true);
      const busy = nextConsolidation(t, chatId, 'busy');
      await turn(client, chatId, 'q3 during consolidation', 'answer three');
      await busy;
      expect((await consolidated).keepFromCursor).toBe(3);

      await turn(client, chatId, 'q4');
      expect(bodyOf(turnRequests().at(-1)!).messages.slice(1)).toEqual([
        { role: 'assistant', content: '[History summary] S1' },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: LONG_B },
        { role: 'user', content: 'q3 during consolidation' },
        { role: 'assistant', content: 'answer three' },
        { role: 'user', content: 'q4' },
      ]);
    });

    it('Scenario: a failed consolidation changes nothing', async () => {
      const chatId = 'consolidate-3';
      await turn(client, chatId, 'q1', LONG_A);
      summarySteps.push({ status: 500 });
      const failed = nextConsolidation(t, chatId);
      await turn(client, chatId, 'q2', LONG_B);
      expect((await failed).outcome).toBe('failed');
      expect((await readHistory(t, chatId)).map((r) => r['role'])).toEqual(['user', 'assistant', 'user', 'assistant']);

      // an empty summary is a failure too (the reference stored a placeholder)
      summarySteps.push({ content: '   ' });
      const empty = nextConsolidation(t, chatId);
      await turn(client, chatId, 'q3');
      expect((await empty).outcome).toBe('failed');
      const last = bodyOf(turnRequests().at(-1)!);
      expect(last.messages.slice(1).map((m) => m.content)).toEqual(['q1', LONG_A, 'q2', LONG_B, 'q3']);
      expect((await readHistory(t, chatId)).some((r) => r['role'] === 'summary')).toBe(false);
    });

    it('Scenario: repeated failures back off (1, 2, 4 … turns skipped) and a success starts over', async () => {
      const chatId = 'consolidate-backoff';
      const outcomes: ConsolidationOutcome[] = [];
      const record = async (content: string) => {
        const finished = nextConsolidation(t, chatId);
        await turn(client, chatId, content, LONG_A);
        outcomes.push((await finished).outcome);
      };
      for (let i = 0; i < 4; i++) summarySteps.push({ status: 500 });
      const summariesBefore = fake.completions.filter(isSummaryRequest).length;
      await record('q1'); // 600 chars: below the threshold
      for (let i = 2; i <= 13; i++) await record(`q${i}`);
      summarySteps.push({ status: 500 });
      await record('q14');
      await record('q15');
      expect(outcomes).toEqual([
        'below_threshold',
        'failed', // first failure: the next trigger tries again
        'failed', // second in a row: skip 1
        'backoff',
        'failed', // third: skip 2
        'backoff',
        'backoff',
        'failed', // fourth: skip 4
        'backoff',
        'backoff',
        'backoff',
        'backoff',
        'consolidated', // the summariser answers again
        'failed', // a new first failure …
        'consolidated', // … is retried on the next turn: the success started over
      ]);
      expect(fake.completions.filter(isSummaryRequest).length - summariesBefore).toBe(7);
    });
  });

  it('Scenario: a consolidation that times out changes nothing', async () => {
    const t = await start({ CASHCODE_BACKGROUND_MODEL_TIMEOUT_MS: '300' });
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      const chatId = 'consolidate-timeout';
      await turn(client, chatId, 'q1', LONG_A);
      summarySteps.push({ hang: true });
      const failed = nextConsolidation(t, chatId);
      await turn(client, chatId, 'q2', LONG_B);
      expect((await failed).outcome).toBe('failed');
      await fake.waitForAbort(2);
      expect((await readHistory(t, chatId)).map((r) => r['role'])).toEqual(['user', 'assistant', 'user', 'assistant']);
      const state = await t.app.get(HistoryLogStore).getChat(chatId);
      expect(state.history.map((m) => m.content)).toEqual(['q1', LONG_A, 'q2', LONG_B]);
    } finally {
      await client.close();
      await t.close();
    }
  });

  it('Scenario: after a restart only the last summary and the kept tail are loaded', async () => {
    const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-consolidation-restart-'));
    const configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-consolidation-config-'));
    try {
      const chatId = 'consolidate-restart';
      let t = await start({}, { dataDir, configDir });
      let client = await WsTestClient.connect(t.wsUrl);
      await turn(client, chatId, 'q1', LONG_A);
      summarySteps.push({ content: 'first summary' });
      let consolidated = nextConsolidation(t, chatId, 'consolidated');
      await turn(client, chatId, 'q2', LONG_B);
      await consolidated;
      // a second, cumulative consolidation: the kept tail grows past the threshold again
      summarySteps.push({ content: 'second summary' });
      consolidated = nextConsolidation(t, chatId, 'consolidated');
      await turn(client, chatId, 'q3', 'c'.repeat(600));
      expect((await consolidated).keepFromCursor).toBe(6);
      const summaryInput = bodyOf(fake.completions.filter(isSummaryRequest).at(-1)!).messages[1]?.content ?? '';
      expect(summaryInput).toContain('ASSISTANT: [History summary] first summary');
      await client.close();
      await t.close();

      t = await start({}, { dataDir, configDir });
      client = await WsTestClient.connect(t.wsUrl);
      try {
        await turn(client, chatId, 'after restart');
        expect(bodyOf(turnRequests().at(-1)!).messages.slice(1)).toEqual([
          { role: 'assistant', content: '[History summary] second summary' },
          { role: 'user', content: 'q3' },
          { role: 'assistant', content: 'c'.repeat(600) },
          { role: 'user', content: 'after restart' },
        ]);
      } finally {
        await client.close();
        await t.close();
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
      await fs.rm(configDir, { recursive: true, force: true });
    }
  });
});
