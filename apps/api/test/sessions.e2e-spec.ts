import { EventEmitter2 } from '@nestjs/event-emitter';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { HistoryLogStore } from '../src/memory/history-log.store';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../src/events/app-events';
import { startTestApp, type TestApp } from './support/test-app';

const PROBLEM_JSON = /^application\/problem\+json/;
const LOCAL_SECONDS_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

/** One history line the way the reference wrote it (Python separators). */
function pyLine(record: Record<string, unknown>): string {
  return `${JSON.stringify(record).replace(/","/g, '", "').replace(/":/g, '": ')}\n`;
}

describe('Sessions REST (e2e)', () => {
  let app: TestApp;
  let memoryDir: string;

  const chatDir = (chatId: string) => join(memoryDir, chatId);

  async function seedChat(chatId: string, lines: string, metadata?: Record<string, unknown>): Promise<void> {
    await fs.mkdir(chatDir(chatId), { recursive: true });
    await fs.writeFile(join(chatDir(chatId), 'history.jsonl'), lines);
    if (metadata) await fs.writeFile(join(chatDir(chatId), 'metadata.json'), JSON.stringify(metadata, null, 2));
  }

  beforeEach(async () => {
    app = await startTestApp();
    memoryDir = app.config.memoryDir;
  });

  afterEach(async () => {
    await app.close();
  });

  describe('GET /api/sessions', () => {
    it('Scenario: no sessions yet', async () => {
      const res = await request(app.httpUrl).get('/api/sessions').expect(200);
      expect(res.body).toEqual({ sessions: [] });
    });

    it('Scenario: sessions are listed newest first with a fallback title', async () => {
      await seedChat('older', pyLine({ cursor: 1, timestamp: '2026-07-01 10:00', role: 'user', content: 'a' }), {
        title: 'Older chat',
      });
      await seedChat('newer', pyLine({ cursor: 1, timestamp: '2026-07-02 10:00', role: 'user', content: 'b' }), {});
      await fs.mkdir(chatDir('empty'));
      await fs.writeFile(join(chatDir('empty'), 'metadata.json'), '{"title": "   "}');
      await fs.mkdir(join(memoryDir, '.hidden'));
      await fs.mkdir(join(memoryDir, 'not a chat'));
      await fs.writeFile(join(memoryDir, 'MEMORY.md'), 'facts');
      await fs.utimes(join(chatDir('older'), 'history.jsonl'), new Date(2026, 6, 1, 10, 0, 0), new Date(2026, 6, 1, 10, 0, 0));
      await fs.utimes(join(chatDir('newer'), 'history.jsonl'), new Date(2026, 6, 2, 10, 0, 0), new Date(2026, 6, 2, 10, 0, 0));
      await fs.utimes(chatDir('empty'), new Date(2026, 5, 1, 8, 30, 5), new Date(2026, 5, 1, 8, 30, 5));

      const res = await request(app.httpUrl).get('/api/sessions').expect(200);
      const body = res.body as { sessions: Array<{ chat_id: string; title: string; updated_at: string }> };
      expect(body.sessions.map(({ chat_id, title }) => ({ chat_id, title }))).toEqual([
        { chat_id: 'newer', title: 'New chat' },
        { chat_id: 'older', title: 'Older chat' },
        { chat_id: 'empty', title: 'New chat' },
      ]);
      const expected = [new Date(2026, 6, 2, 10, 0, 0), new Date(2026, 6, 1, 10, 0, 0), new Date(2026, 5, 1, 8, 30, 5)];
      body.sessions.forEach((session, index) => {
        expect(session.updated_at).toMatch(LOCAL_SECONDS_WITH_OFFSET);
        expect(session.updated_at.slice(0, 19)).toBe(
          ['2026-07-02T10:00:00', '2026-07-01T10:00:00', '2026-06-01T08:30:05'][index],
        );
        expect(Date.parse(session.updated_at)).toBe(expected[index]!.getTime());
      });
    });

    it('Scenario: updated_at carries the server offset so any time zone reads the same instant', async () => {
      await seedChat('fresh', pyLine({ cursor: 1, timestamp: '2026-07-02 10:00', role: 'user', content: 'hi' }));
      const instant = new Date(Date.UTC(2026, 6, 2, 2, 0, 7));
      await fs.utimes(join(chatDir('fresh'), 'history.jsonl'), instant, instant);
      const res = await request(app.httpUrl).get('/api/sessions').expect(200);
      const [session] = (res.body as { sessions: Array<{ updated_at: string }> }).sessions;
      const minutes = -instant.getTimezoneOffset();
      const pad = (value: number) => String(value).padStart(2, '0');
      const offset = `${minutes >= 0 ? '+' : '-'}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
      expect(session?.updated_at).toMatch(LOCAL_SECONDS_WITH_OFFSET);
      expect(session!.updated_at.endsWith(offset)).toBe(true);
      // a reader anywhere (Date.parse honours the offset) gets the file's instant, not a shifted one
      expect(Date.parse(session!.updated_at)).toBe(instant.getTime());
    });
  });

  describe('GET /api/sessions/{chat_id}/messages', () => {
    it('Scenario: only user and assistant messages are returned, receipts re-sanitised', async () => {
      const calls = [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }];
      await seedChat(
        'chat-1',
        pyLine({
          cursor: 1,
          timestamp: '2026-07-01 10:00',
          role: 'user',
          content: 'list files',
          mentioned_skills: [{ name: 'weather', label: ' Weather ' }],
          selected_mcp_connectors: [{ server: 'github' }],
        }) +
          pyLine({ cursor: 2, timestamp: '2026-07-01 10:00', role: 'tool_calls', content: '[TOOL_CALLS: list_dir]', tool_calls: calls }) +
          pyLine({ cursor: 3, timestamp: '2026-07-01 10:00', role: 'tool', content: 'a.txt', tool_call_id: 'c1', name: 'list_dir' }) +
          pyLine({ cursor: 4, timestamp: '2026-07-01 10:00', role: 'assistant', content: 'One file.' }) +
          pyLine({ cursor: 5, timestamp: '2026-07-01 10:01', role: 'summary', content: 'summary text' }) +
          pyLine({
            cursor: 6,
            timestamp: '2026-07-01 10:02',
            role: 'user',
            content: 'bad receipts',
            mentioned_skills: [{ name: 'Not Valid!' }],
            selected_mcp_connectors: [{ server: 'github' }],
          }) +
          pyLine({ cursor: 7, timestamp: '2026-07-01 10:02', role: 'assistant', content: 'Once upon', cancelled: true }) +
          'this line is garbage\n' +
          pyLine({ cursor: 8, timestamp: '2026-07-01 10:03', role: 'user', content: 'torn' }).slice(0, 20),
      );

      const res = await request(app.httpUrl).get('/api/sessions/chat-1/messages').expect(200);
      expect(res.body).toEqual({
        chat_id: 'chat-1',
        messages: [
          {
            role: 'user',
            content: 'list files',
            mentioned_skills: [{ name: 'weather', label: 'Weather' }],
            selected_mcp_connectors: [{ server: 'github' }],
            cursor: 1,
          },
          {
            role: 'assistant',
            content: 'One file.',
            cursor: 4,
            // a record written before ok and duration_ms were persisted
            tools: [
              { call_id: 'c1', name: 'list_dir', arguments: '{}', result_preview: 'a.txt', ok: null, duration_ms: null },
            ],
          },
          { role: 'user', content: 'bad receipts', cursor: 6 },
          { role: 'assistant', content: 'Once upon', cancelled: true, cursor: 7 },
        ],
      });
    });

    it('Scenario: a session directory without history has no messages', async () => {
      await fs.mkdir(chatDir('blank'));
      const res = await request(app.httpUrl).get('/api/sessions/blank/messages').expect(200);
      expect(res.body).toEqual({ chat_id: 'blank', messages: [] });
    });

    it('Scenario: an unknown session is 404 problem+json', async () => {
      const res = await request(app.httpUrl).get('/api/sessions/unknown/messages').expect(404);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 404, detail: 'session not found' });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    });

    it('Scenario: an invalid chat id is 400 before the disk is touched', async () => {
      // a directory with a name the pattern refuses is never read
      await fs.mkdir(chatDir('bad.id'));
      for (const id of ['bad.id', 'a%20b', 'x'.repeat(65), '..%2F..%2Fetc']) {
        const res = await request(app.httpUrl).get(`/api/sessions/${id}/messages`).expect(400);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(res.body).toMatchObject({ status: 400, detail: 'invalid chat_id' });
      }
    });
  });

  describe('PATCH /api/sessions/{chat_id}', () => {
    it('Scenario: rename trims the title and updates disk and the live cache', async () => {
      const store = app.app.get(HistoryLogStore);
      await store.appendTurn('r-1', { content: 'hi' }, [], { content: 'hello' });
      await store.saveMetadata('r-1', { title: 'old', activated_tools: { mcp_x_y: 1 } });
      const state = await store.getChat('r-1');

      const res = await request(app.httpUrl).patch('/api/sessions/r-1').send({ title: '  Trip plans \n' }).expect(200);
      expect(res.body).toEqual({ chat_id: 'r-1', title: 'Trip plans' });
      const onDisk = await fs.readFile(join(chatDir('r-1'), 'metadata.json'), 'utf8');
      expect(JSON.parse(onDisk)).toEqual({ title: 'Trip plans', activated_tools: { mcp_x_y: 1 } });
      expect(onDisk).toContain('\n  "title"');
      expect(state.metadata.title).toBe('Trip plans');

      const list = await request(app.httpUrl).get('/api/sessions').expect(200);
      expect(list.body.sessions[0]).toMatchObject({ chat_id: 'r-1', title: 'Trip plans' });
    });

    it('Scenario: a blank title is rejected with 422 naming the field', async () => {
      await fs.mkdir(chatDir('r-2'));
      const res = await request(app.httpUrl).patch('/api/sessions/r-2').send({ title: '   ' }).expect(422);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body.errors).toEqual([{ field: 'title', message: 'title must not be empty' }]);
      await expect(fs.stat(join(chatDir('r-2'), 'metadata.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it.each([
      ['a missing title', {}],
      ['a non-string title', { title: 42 }],
      ['a title over 200 characters', { title: 'x'.repeat(201) }],
      ['an unknown field', { title: 'ok', extra: true }],
    ])('Scenario: %s is rejected with 422', async (_name, body) => {
      await fs.mkdir(chatDir('r-3'), { recursive: true });
      const res = await request(app.httpUrl).patch('/api/sessions/r-3').send(body).expect(422);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(Array.isArray(res.body.errors)).toBe(true);
    });

    it('accepts a title of exactly 200 characters', async () => {
      await fs.mkdir(chatDir('r-4'));
      const title = '题'.repeat(200);
      const res = await request(app.httpUrl).patch('/api/sessions/r-4').send({ title }).expect(200);
      expect(res.body.title).toBe(title);
    });

    it('Scenario: renaming an unknown session is 404 and creates nothing', async () => {
      const res = await request(app.httpUrl).patch('/api/sessions/ghost').send({ title: 'x' }).expect(404);
      expect(res.body).toMatchObject({ status: 404, detail: 'session not found' });
      await expect(fs.stat(chatDir('ghost'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('Scenario: renaming with an invalid chat id is 400', async () => {
      const res = await request(app.httpUrl).patch('/api/sessions/bad!id').send({ title: 'x' }).expect(400);
      expect(res.body).toMatchObject({ detail: 'invalid chat_id' });
    });
  });

  describe('DELETE /api/sessions/{chat_id}', () => {
    it('Scenario: delete removes the session, forgets it in memory and announces it', async () => {
      const store = app.app.get(HistoryLogStore);
      await store.getChat('d-1');
      await store.appendTurn('d-1', { content: 'remember my secret' }, [], { content: 'ok' });
      const events: SessionDeletedEvent[] = [];
      app.app.get(EventEmitter2).on(SESSION_DELETED_EVENT, (event: SessionDeletedEvent) => events.push(event));

      const res = await request(app.httpUrl).delete('/api/sessions/d-1').expect(204);
      expect(res.text).toBe('');
      await expect(fs.stat(chatDir('d-1'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(events).toEqual([{ chatId: 'd-1' }]);
      // the old context does not come back
      expect((await store.getChat('d-1')).history).toEqual([]);
      await request(app.httpUrl).get('/api/sessions/d-1/messages').expect(404);
      expect((await request(app.httpUrl).get('/api/sessions').expect(200)).body).toEqual({ sessions: [] });
    });

    it('Scenario: deleting an unknown session is 404', async () => {
      const res = await request(app.httpUrl).delete('/api/sessions/ghost').expect(404);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 404, detail: 'session not found' });
    });

    it('Scenario: deleting with an invalid chat id is 400 and touches nothing', async () => {
      await fs.mkdir(chatDir('keep'));
      const res = await request(app.httpUrl).delete('/api/sessions/..%2Fkeep').expect(400);
      expect(res.body).toMatchObject({ detail: 'invalid chat_id' });
      expect((await fs.stat(chatDir('keep'))).isDirectory()).toBe(true);
    });
  });

  it('Scenario: sessions and their messages survive a restart on the same data dir', async () => {
    const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-restart-'));
    try {
      const first = await startTestApp({ dataDir });
      const store = first.app.get(HistoryLogStore);
      await store.appendTurn('keep-1', { content: 'before restart' }, [], { content: 'noted' });
      await store.saveMetadata('keep-1', { title: 'Kept' });
      await first.close();

      const second = await startTestApp({ dataDir });
      try {
        const list = await request(second.httpUrl).get('/api/sessions').expect(200);
        expect(list.body.sessions).toEqual([expect.objectContaining({ chat_id: 'keep-1', title: 'Kept' })]);
        const messages = await request(second.httpUrl).get('/api/sessions/keep-1/messages').expect(200);
        expect(messages.body.messages).toEqual([
          { role: 'user', content: 'before restart', cursor: 1 },
          { role: 'assistant', content: 'noted', cursor: 2 },
        ]);
        await second.app.get(HistoryLogStore).appendTurn('keep-1', { content: 'after' }, [], { content: 'ok' });
        const lines = (await fs.readFile(join(second.config.memoryDir, 'keep-1', 'history.jsonl'), 'utf8')).trim().split('\n');
        expect(lines.map((l) => (JSON.parse(l) as { cursor: number }).cursor)).toEqual([1, 2, 3, 4]);
      } finally {
        await second.close();
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('never puts a host path in a sessions response', async () => {
    await seedChat('p-1', pyLine({ cursor: 1, timestamp: '2026-07-01 10:00', role: 'user', content: 'x' }));
    const bodies = await Promise.all([
      request(app.httpUrl).get('/api/sessions'),
      request(app.httpUrl).get('/api/sessions/p-1/messages'),
      request(app.httpUrl).get('/api/sessions/none/messages'),
      request(app.httpUrl).patch('/api/sessions/none').send({ title: 'x' }),
      request(app.httpUrl).delete('/api/sessions/none'),
    ]);
    for (const res of bodies) expect(res.text).not.toContain(app.dataDir);
  });

  it('documents every sessions route and its errors in OpenAPI', async () => {
    const res = await request(app.httpUrl).get('/api/docs-json').expect(200);
    const paths = res.body.paths as Record<string, Record<string, { responses: Record<string, unknown>; tags?: string[] }>>;
    expect(Object.keys(paths['/api/sessions'] ?? {})).toContain('get');
    expect(Object.keys(paths['/api/sessions/{chat_id}/messages']?.['get']?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '404']),
    );
    expect(Object.keys(paths['/api/sessions/{chat_id}']?.['patch']?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '404', '422']),
    );
    expect(Object.keys(paths['/api/sessions/{chat_id}']?.['delete']?.responses ?? {})).toEqual(
      expect.arrayContaining(['204', '400', '404']),
    );
    expect(paths['/api/sessions']?.['get']?.tags).toEqual(['sessions']);
  });
});
