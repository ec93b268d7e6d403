/**
 * The persisted session index across a restart of the app on the same data directory (openspec memory "Requirement:
 * Persisted session index"): sessions written through real turns are found by the search endpoint after the restart,
 * and the start reads no history file to get there.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { HistoryReader } from '../src/memory/history-reader';
import { SessionIndex } from '../src/memory/session-index';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

describe('Persisted session index across a restart (e2e)', () => {
  let fake: FakeModelServer;
  let dataDir: string;
  let configDir: string;
  let t: TestApp | null = null;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-index-restart-'));
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-index-restart-config-'));
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
    await fake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(configDir, { recursive: true, force: true });
  });

  it('Scenario: after a restart the search finds earlier sessions without reading their histories', async () => {
    t = await startTestApp({ dataDir, configDir, env: { DREAM_INTERVAL: '0' } });
    await t.app.get(SessionIndex).ready();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const client = await WsTestClient.connect(t.wsUrl);
    for (const [chatId, content, answer] of [
      ['restart-trip', 'Plan a spring trip to Kyoto', 'See the cherry blossoms at Maruyama park.'],
      ['restart-zh', '我想学习机器学习，推荐一些书', '推荐《机器学习》和《深度学习》。'],
    ] as const) {
      fake.enqueue({ content: answer });
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, content);
      await done;
    }
    await client.close();
    await t.close();
    t = null;

    const reads = jest.spyOn(HistoryReader.prototype, 'readRecordsWithPositions');
    t = await startTestApp({ dataDir, configDir, env: { DREAM_INTERVAL: '0' } });
    const index = t.app.get(SessionIndex);
    await index.ready();
    expect(index.size).toBe(4);

    const english = await request(t.httpUrl).get('/api/sessions/search').query({ q: 'cherry blossoms' }).expect(200);
    expect(english.body.results).toEqual([
      expect.objectContaining({ chat_id: 'restart-trip', match: 'content', role: 'assistant', snippet: expect.stringContaining('cherry blossoms') }),
    ]);
    const chinese = await request(t.httpUrl).get('/api/sessions/search').query({ q: '机器学习' }).expect(200);
    expect(chinese.body.results.map((r: { chat_id: string }) => r.chat_id)).toEqual(['restart-zh']);
    expect(reads).not.toHaveBeenCalled();

    const file = join(dataDir, 'memory-index', 'sessions.sqlite');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });
});
