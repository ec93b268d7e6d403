import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { formatLocalIsoSeconds } from '../src/memory/local-time';
import { startTestApp, type TestApp } from './support/test-app';

const PROBLEM_JSON = /^application\/problem\+json/;

function line(record: Record<string, unknown>): string {
  return `${JSON.stringify(record)}\n`;
}

/** openspec sessions "Requirement: Search". */
describe('Sessions search (e2e)', () => {
  let app: TestApp;
  let dataDir: string;

  /** seeded before the start, so the session index finds them in its initial build */
  async function seedChat(chatId: string, lines: string, title: string | null, mtime: Date): Promise<void> {
    const dir = join(dataDir, 'memory', chatId);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(join(dir, 'history.jsonl'), lines);
    if (title) await fs.writeFile(join(dir, 'metadata.json'), JSON.stringify({ title }));
    await fs.utimes(join(dir, 'history.jsonl'), mtime, mtime);
  }

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-search-'));
    await seedChat(
      'travel',
      line({ cursor: 1, timestamp: '2026-07-01 10:00', role: 'user', content: 'What is the capital of France?' }) +
        line({ cursor: 2, timestamp: '2026-07-01 10:00', role: 'assistant', content: 'Paris is the capital of France.' }) +
        line({ cursor: 3, timestamp: '2026-07-01 10:00', role: 'tool', content: 'zebra in a tool result', tool_call_id: 'c', name: 'x' }),
      'Trip ideas',
      new Date(2026, 6, 1, 10, 0, 0),
    );
    await seedChat(
      'capitals-title',
      line({ cursor: 1, timestamp: '2026-07-02 10:00', role: 'user', content: 'list them' }),
      'Capital cities',
      new Date(2026, 6, 2, 10, 0, 0),
    );
    await seedChat(
      'cooking',
      line({ cursor: 1, timestamp: '2026-07-03 10:00', role: 'user', content: 'How long to boil an egg?' }),
      null,
      new Date(2026, 6, 3, 10, 0, 0),
    );
    app = await startTestApp({ dataDir });
  });

  afterEach(async () => {
    await app.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('Scenario: search finds chats by title first, then by message text, one row per chat', async () => {
    const res = await request(app.httpUrl).get('/api/sessions/search').query({ q: '  CAPITAL ' }).expect(200);
    expect(res.body).toEqual({
      query: 'CAPITAL',
      results: [
        { chat_id: 'capitals-title', title: 'Capital cities', updated_at: formatLocalIsoSeconds(new Date(2026, 6, 2, 10, 0, 0)), match: 'title' },
        {
          chat_id: 'travel',
          title: 'Trip ideas',
          updated_at: formatLocalIsoSeconds(new Date(2026, 6, 1, 10, 0, 0)),
          match: 'content',
          snippet: expect.stringContaining('capital of France'),
          role: expect.stringMatching(/^(user|assistant)$/),
        },
      ],
    });
    const limited = await request(app.httpUrl).get('/api/sessions/search').query({ q: 'capital', limit: 1 }).expect(200);
    expect(limited.body.results.map((r: { chat_id: string }) => r.chat_id)).toEqual(['capitals-title']);
  });

  it('Scenario: search ignores tool output and answers an empty list when nothing matches', async () => {
    const tool = await request(app.httpUrl).get('/api/sessions/search').query({ q: 'zebra' }).expect(200);
    expect(tool.body).toEqual({ query: 'zebra', results: [] });
    const egg = await request(app.httpUrl).get('/api/sessions/search').query({ q: 'egg' }).expect(200);
    expect(egg.body.results).toEqual([expect.objectContaining({ chat_id: 'cooking', title: 'New chat', match: 'content' })]);
  });

  it('Scenario: a blank, missing or too long query is 422 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['', 'q'],
      ['q=', 'q'],
      ['q=%20%20', 'q'],
      [`q=${'a'.repeat(201)}`, 'q'],
      ['q=a&q=b', 'q'],
      ['q=a&limit=0', 'limit'],
      ['q=a&limit=21', 'limit'],
      ['q=a&limit=x', 'limit'],
    ];
    for (const [query, field] of cases) {
      const res = await request(app.httpUrl).get(`/api/sessions/search?${query}`).expect(422);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    const blank = await request(app.httpUrl).get('/api/sessions/search?q=%20').expect(422);
    expect(blank.body.errors).toEqual([{ field: 'q', message: 'q must not be empty' }]);
    await request(app.httpUrl).get(`/api/sessions/search?q=${'a'.repeat(200)}`).expect(200);
    const unknown = await request(app.httpUrl).get('/api/sessions/search?q=a&other=1').expect(422);
    expect(unknown.headers['content-type']).toMatch(PROBLEM_JSON);
  });

  it('Scenario: the search route is documented in OpenAPI', async () => {
    const res = await request(app.httpUrl).get('/api/docs-json').expect(200);
    const route = res.body.paths['/api/sessions/search']?.get;
    expect(route?.tags).toEqual(['sessions']);
    expect(Object.keys(route?.responses ?? {})).toEqual(expect.arrayContaining(['200', '422']));
    const names = (route?.parameters as Array<{ name: string }>).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['q', 'limit']));
  });
});
