import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/test-app';

const PROBLEM_JSON = /^application\/problem\+json/;

function line(record: Record<string, unknown>): string {
  return `${JSON.stringify(record)}\n`;
}

/** openspec sessions "Requirement: Export". */
describe('Sessions export (e2e)', () => {
  let app: TestApp;

  async function seedChat(chatId: string, lines: string, metadata?: Record<string, unknown>): Promise<void> {
    const dir = join(app.config.memoryDir, chatId);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(join(dir, 'history.jsonl'), lines);
    if (metadata) await fs.writeFile(join(dir, 'metadata.json'), JSON.stringify(metadata));
  }

  const history =
    line({ cursor: 1, timestamp: '2026-07-01 10:00', role: 'user', content: 'list files', mentioned_skills: [{ name: 'weather' }] }) +
    line({
      cursor: 2,
      timestamp: '2026-07-01 10:00',
      role: 'tool_calls',
      content: '[TOOL_CALLS: list_dir]',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }],
    }) +
    line({ cursor: 3, timestamp: '2026-07-01 10:00', role: 'tool', content: 'secret-tool-output', tool_call_id: 'c1', name: 'list_dir' }) +
    line({ cursor: 4, timestamp: '2026-07-01 10:00', role: 'assistant', content: 'One file:\n\n- `a.txt`' }) +
    line({ cursor: 5, timestamp: '2026-07-01 10:01', role: 'user', content: 'tell a story' }) +
    line({ cursor: 6, timestamp: '2026-07-01 10:01', role: 'assistant', content: 'Once upon', cancelled: true });

  beforeEach(async () => {
    app = await startTestApp();
  });

  afterEach(async () => {
    await app.close();
  });

  it('Scenario: a chat exports as Markdown with one section per message', async () => {
    await seedChat('chat-md', history, { title: 'Files\nand stories' });
    const res = await request(app.httpUrl).get('/api/sessions/chat-md/export').expect(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="cashcode-chat-md.md"');
    const text = res.text;
    expect(text.startsWith('# Files and stories\n\n_Chat `chat-md`, exported from CashCode on ')).toBe(true);
    const body = text.slice(text.indexOf('._\n\n') + 4);
    expect(body).toBe(
      [
        '## User',
        '_Skills: weather_',
        'list files',
        '## Assistant',
        'One file:\n\n- `a.txt`',
        '## User',
        'tell a story',
        '## Assistant',
        'Once upon',
        '_(stopped)_',
      ].join('\n\n') + '\n',
    );
    expect(text).not.toContain('secret-tool-output');
    const explicit = await request(app.httpUrl).get('/api/sessions/chat-md/export?format=markdown').expect(200);
    expect(explicit.text.split('\n').slice(3)).toEqual(text.split('\n').slice(3));
  });

  it('Scenario: a chat exports as JSON with the messages projection', async () => {
    await seedChat('chat-json', history);
    const [exported, projection] = await Promise.all([
      request(app.httpUrl).get('/api/sessions/chat-json/export?format=json').expect(200),
      request(app.httpUrl).get('/api/sessions/chat-json/messages').expect(200),
    ]);
    expect(exported.headers['content-type']).toMatch(/^application\/json/);
    expect(exported.headers['content-disposition']).toBe('attachment; filename="cashcode-chat-json.json"');
    expect(exported.body).toEqual({
      format: 'cashcode.session-export',
      version: 1,
      chat_id: 'chat-json',
      title: 'New chat',
      exported_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      messages: projection.body.messages,
    });
    expect(exported.body.messages).toHaveLength(4);
  });

  it('Scenario: an unknown export format is 422 naming the field', async () => {
    await seedChat('chat-bad', history);
    for (const query of ['format=pdf', 'format=', 'format=json&format=markdown', 'other=1']) {
      const res = await request(app.httpUrl).get(`/api/sessions/chat-bad/export?${query}`).expect(422);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body.status).toBe(422);
      expect(Array.isArray(res.body.errors)).toBe(true);
    }
    const res = await request(app.httpUrl).get('/api/sessions/chat-bad/export?format=pdf').expect(422);
    expect(res.body.errors).toEqual([{ field: 'format', message: 'format must be one of markdown, json' }]);
  });

  it('Scenario: exporting an unknown session is 404 and an invalid id is 400', async () => {
    const missing = await request(app.httpUrl).get('/api/sessions/nope/export?format=json').expect(404);
    expect(missing.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(missing.body).toMatchObject({ status: 404, code: 'session_not_found', detail: 'session not found' });
    const invalid = await request(app.httpUrl).get('/api/sessions/bad%20id/export').expect(400);
    expect(invalid.headers['content-type']).toMatch(PROBLEM_JSON);
    await expect(fs.readdir(app.config.memoryDir)).resolves.not.toContain('nope');
  });

  it('Scenario: the export route is documented in OpenAPI', async () => {
    const res = await request(app.httpUrl).get('/api/docs-json').expect(200);
    const route = res.body.paths['/api/sessions/{chat_id}/export']?.get;
    expect(route?.tags).toEqual(['sessions']);
    expect(Object.keys(route?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '404', '422']));
    const format = (route?.parameters as Array<{ name: string; schema?: { enum?: string[] } }>).find((p) => p.name === 'format');
    expect(format?.schema?.enum).toEqual(['markdown', 'json']);
  });
});
