/**
 * Memory you can trust, through the real server and the fake model: every entry that reaches MEMORY.md is recorded in
 * the provenance log (`GET /api/memory/provenance`) with its chat, turn, requester and the untrusted content the model
 * had in its context (openspec memory "Requirement: Memory provenance").
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { MemoryProvenanceResponse, ServerEvent } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('memory provenance (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let chatCounter = 0;
  const newChatId = () => `provenance-${++chatCounter}`;

  function startTurn(chatId: string, content: string): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([client.next('done', (e) => e.chat_id === chatId), client.next('error', (e) => e.chat_id === chatId)]);
    client.sendMessage(chatId, content);
    return end.then(() => client.chatEvents(chatId).slice(before));
  }

  async function provenance(): Promise<MemoryProvenanceResponse> {
    return (await request(t.httpUrl).get('/api/memory/provenance').expect(200)).body as MemoryProvenanceResponse;
  }

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { DREAM_INTERVAL: '0', CASHCODE_FETCH_ALLOW_PRIVATE: 'true' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    fake.reset();
    await fs.rm(join(t.config.memoryDir, 'MEMORY.md'), { force: true });
    await fs.rm(join(t.config.memoryDir, 'MEMORY.provenance.jsonl'), { force: true });
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterEach(async () => {
    await client?.close();
  });

  it('Scenario: a saved fact records its chat, turn and requester with no untrusted sources', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [{ id: 's1', name: 'save_memory', arguments: '{"content":"Prefers green tea"}' }] }, { content: 'Noted.' });
    const events = await startTurn(chatId, 'remember that I prefer green tea');
    // an owner-only turn is never asked
    expect(events.some((e) => e.event === 'approval_request')).toBe(false);
    expect(events.at(-1)?.event).toBe('done');
    const log = await provenance();
    expect(log).toMatchObject({ total: 1, offset: 0, unreadable: 0 });
    expect(log.records[0]).toMatchObject({ origin: 'save_memory', requested_by: 'owner', chat_id: chatId, untrusted_sources: [] });
    expect(log.records[0]?.turn_id).toMatch(/^[0-9a-f]{32}$/);
    expect(log.records[0]?.entry).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d\] Prefers green tea$/);
    const stat = await fs.stat(join(t.config.memoryDir, 'MEMORY.provenance.jsonl'));
    expect(stat.mode & 0o777).toBe(0o600);
  });

  it("Scenario: a console edit records each added line as the owner's", async () => {
    const first = '# Facts\n- a\n';
    await request(t.httpUrl).put('/api/memory').send({ content: first, hash: sha256('') }).expect(200);
    await request(t.httpUrl).put('/api/memory').send({ content: `${first}- b\n- c\n`, hash: sha256(first) }).expect(200);
    const log = await provenance();
    expect(log.records.map((r) => [r.origin, r.requested_by, r.entry])).toEqual([
      ['console', 'owner', '# Facts'],
      ['console', 'owner', '- a'],
      ['console', 'owner', '- b'],
      ['console', 'owner', '- c'],
    ]);
  });

  it('answers 422 problem+json for a bad page and lists the route in the OpenAPI document', async () => {
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'limit=x']) {
      const res = await request(t.httpUrl).get(`/api/memory/provenance?${query}`).expect(422);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    const doc = (await request(t.httpUrl).get('/api/docs-json').expect(200)).body as { paths: Record<string, { get?: { summary?: string } }> };
    expect(doc.paths['/api/memory/provenance']?.get?.summary).toContain('provenance');
  });
});
