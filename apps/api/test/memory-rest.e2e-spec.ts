/**
 * `/api/memory` and `/api/memory/soul`: content hash, 409 on a concurrent change, validation, OpenAPI, and the
 * edited files in the next turn's system prompt (also after a save_memory tool call).
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { MemoryDocuments, DEFAULT_SOUL } from '../src/memory/memory-documents';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const EMPTY_HASH = sha256('');

interface CompletionBody {
  stream?: boolean;
  messages: Array<{ role: string; content: string | null }>;
}

describe('memory REST (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { DREAM_INTERVAL: '0' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  beforeEach(async () => {
    fake.reset();
    await fs.rm(join(t.config.memoryDir, 'MEMORY.md'), { force: true });
    await fs.rm(join(t.config.memoryDir, 'SOUL.md'), { force: true });
  });

  async function systemPromptOfNextTurn(chatId: string, steps: Parameters<FakeModelServer['enqueue']> = []): Promise<string> {
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue(...steps);
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'hello');
      await done;
    } finally {
      await client.close();
    }
    const turns = fake.completions.filter((r: RecordedRequest) => (r.body as CompletionBody).stream === true);
    return String((turns.at(-1)!.body as CompletionBody).messages[0]?.content);
  }

  describe('MEMORY.md', () => {
    it('Scenario: GET returns the content with its sha256 hash; a missing file is empty', async () => {
      const empty = await request(t.httpUrl).get('/api/memory').expect(200);
      expect(empty.body).toEqual({ content: '', hash: EMPTY_HASH });
      await fs.writeFile(join(t.config.memoryDir, 'MEMORY.md'), '- a fact\n');
      expect((await request(t.httpUrl).get('/api/memory').expect(200)).body).toEqual({
        content: '- a fact\n',
        hash: sha256('- a fact\n'),
      });
    });

    it('Scenario: PUT with the current hash replaces the file and the next turn sees it', async () => {
      const content = '# Preferences\n- The user prefers green tea\n';
      const saved = await request(t.httpUrl).put('/api/memory').send({ content, hash: EMPTY_HASH }).expect(200);
      expect(saved.body).toEqual({ content, hash: sha256(content) });
      expect(await fs.readFile(join(t.config.memoryDir, 'MEMORY.md'), 'utf8')).toBe(content);
      const system = await systemPromptOfNextTurn('rest-memory-1');
      expect(system).toContain('\n\n## Remembered information\n# Preferences\n- The user prefers green tea');
    });

    it('Scenario: PUT with a stale hash answers 409 memory_conflict and changes nothing', async () => {
      const first = await request(t.httpUrl).put('/api/memory').send({ content: 'v1\n', hash: EMPTY_HASH }).expect(200);
      // an agent save changes the file after the editor read it
      await t.app.get(MemoryDocuments).saveLongTermMemory('saved by the agent');
      const stale = await request(t.httpUrl).put('/api/memory').send({ content: 'v2\n', hash: first.body.hash }).expect(409);
      expect(stale.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(stale.body).toMatchObject({ status: 409, code: 'memory_conflict', instance: '/api/memory' });
      const current = await fs.readFile(join(t.config.memoryDir, 'MEMORY.md'), 'utf8');
      expect(current).toMatch(/^v1\n\[\d{4}-\d\d-\d\d \d\d:\d\d\] saved by the agent\n$/);
      // reload and apply again: accepted
      const again = await request(t.httpUrl).put('/api/memory').send({ content: 'v2\n', hash: sha256(current) }).expect(200);
      expect(again.body.content).toBe('v2\n');
    });

    it('Scenario: two concurrent PUTs with the same hash: one wins, the other gets 409', async () => {
      const [a, b] = await Promise.all([
        request(t.httpUrl).put('/api/memory').send({ content: 'A\n', hash: EMPTY_HASH }),
        request(t.httpUrl).put('/api/memory').send({ content: 'B\n', hash: EMPTY_HASH }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const winner = a.status === 200 ? 'A\n' : 'B\n';
      expect(await fs.readFile(join(t.config.memoryDir, 'MEMORY.md'), 'utf8')).toBe(winner);
    });

    it('Scenario: invalid bodies answer 422 with field errors', async () => {
      const badHash = await request(t.httpUrl).put('/api/memory').send({ content: 'x', hash: 'abc' }).expect(422);
      expect(badHash.body.errors).toEqual([expect.objectContaining({ field: 'hash' })]);
      const noContent = await request(t.httpUrl).put('/api/memory').send({ hash: EMPTY_HASH }).expect(422);
      expect(noContent.body.errors).toContainEqual({ field: 'content', message: 'content must be a string' });
      expect((noContent.body.errors as Array<{ field: string }>).every((e) => e.field === 'content')).toBe(true);
      await request(t.httpUrl).put('/api/memory').send({ content: 'x', hash: EMPTY_HASH, extra: 1 }).expect(422);
      await request(t.httpUrl).get('/api/memory/dreams?limit=0').expect(422);
    });

    it('Scenario: a fact saved with save_memory is in the next turn\'s system prompt', async () => {
      await systemPromptOfNextTurn('rest-memory-save', [
        { toolCalls: [{ name: 'save_memory', arguments: '{"content":"The user was born in Lisbon"}' }] },
        { content: 'Saved.' },
      ]);
      const system = await systemPromptOfNextTurn('rest-memory-save-2');
      expect(system).toMatch(/## Remembered information\n\[\d{4}-\d\d-\d\d \d\d:\d\d\] The user was born in Lisbon(?:\n\n|$)/);
    });
  });

  describe('SOUL.md', () => {
    it('Scenario: without SOUL.md the built-in persona is used and reported', async () => {
      const soul = await request(t.httpUrl).get('/api/memory/soul').expect(200);
      expect(soul.body).toEqual({ content: '', hash: EMPTY_HASH, uses_default: true, default_content: DEFAULT_SOUL });
    });

    it('Scenario: PUT replaces the persona for the next turn; a stale hash answers 409 soul_conflict', async () => {
      const content = 'You are Jeeves, a discreet assistant.\n';
      const saved = await request(t.httpUrl).put('/api/memory/soul').send({ content, hash: EMPTY_HASH }).expect(200);
      expect(saved.body).toMatchObject({ content, hash: sha256(content), uses_default: false });
      expect((await systemPromptOfNextTurn('rest-soul-1')).startsWith('You are Jeeves, a discreet assistant.')).toBe(true);

      const stale = await request(t.httpUrl).put('/api/memory/soul').send({ content: 'x', hash: EMPTY_HASH }).expect(409);
      expect(stale.body).toMatchObject({ code: 'soul_conflict' });

      // an empty SOUL.md brings the built-in persona back
      await request(t.httpUrl).put('/api/memory/soul').send({ content: '', hash: sha256(content) }).expect(200);
      expect((await systemPromptOfNextTurn('rest-soul-2')).startsWith(DEFAULT_SOUL)).toBe(true);
    });
  });

  it('Scenario: every memory route is in the OpenAPI document with its problem responses', async () => {
    const doc = (await request(t.httpUrl).get('/api/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; summary?: string }>>;
    };
    expect(Object.keys(doc.paths['/api/memory'] ?? {}).sort()).toEqual(['get', 'put']);
    expect(Object.keys(doc.paths['/api/memory/soul'] ?? {}).sort()).toEqual(['get', 'put']);
    expect(doc.paths['/api/memory']!['put']!.responses).toHaveProperty('409');
    expect(doc.paths['/api/memory/dreams']!['get']).toBeDefined();
    expect(doc.paths['/api/memory/dreams/{id}/revert']!['post']!.responses).toHaveProperty('404');
    expect(doc.paths['/api/memory/dream']!['post']!.responses).toHaveProperty('409');
    for (const path of ['/api/memory', '/api/memory/soul', '/api/memory/dreams', '/api/memory/dream']) {
      for (const operation of Object.values(doc.paths[path]!)) expect(operation.summary).toBeTruthy();
    }
  });
});
