/**
 * `session_search` through a real turn: the model calls the tool and gets the best snippets of other chats (English
 * and Chinese), with chat id, title, cursor and date; the index follows appended turns and deleted sessions.
 */
import request from 'supertest';
import { SessionIndex } from '../src/memory/session-index';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  stream?: boolean;
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}

interface SearchResult {
  chat_id: string;
  title: string | null;
  cursor: number;
  date: string;
  role: string;
  current_chat: boolean;
  snippet: string;
}

describe('session_search (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { DREAM_INTERVAL: '0' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterAll(async () => {
    await client.close();
    await t.close();
    await fake.close();
  });

  beforeEach(() => fake.reset());

  async function turn(chatId: string, content: string, ...steps: Parameters<FakeModelServer['enqueue']>): Promise<void> {
    fake.enqueue(...steps);
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, content);
    await done;
  }

  /** Runs a turn in which the model calls session_search, and returns the tool result the model received. */
  async function search(chatId: string, query: string): Promise<SearchResult[]> {
    await turn(
      chatId,
      `search for ${query}`,
      { toolCalls: [{ id: 'call_search', name: 'session_search', arguments: JSON.stringify({ query, limit: 3 }) }] },
      { content: 'Found it.' },
    );
    const second = fake.completions.at(-1) as RecordedRequest;
    const tool = (second.body as CompletionBody).messages.findLast((m) => m.role === 'tool' && m.tool_call_id === 'call_search');
    const parsed = JSON.parse(String(tool?.content)) as { query: string; results: SearchResult[] };
    expect(parsed.query).toBe(query);
    return parsed.results;
  }

  it('Scenario: session_search ranks messages across two chats, English and Chinese', async () => {
    await turn('search-trip', 'Plan a spring trip to Kyoto', { content: 'Kyoto in spring: see the cherry blossoms at Maruyama park.' });
    await turn('search-zh', '我想学习机器学习，推荐一些书', { content: '推荐《机器学习》和《深度学习》。' });
    await request(t.httpUrl).patch('/api/sessions/search-trip').send({ title: 'Kyoto trip' }).expect(200);
    expect((fake.completions[0]!.body as CompletionBody).tools?.map((tool) => tool.function.name)).toContain('session_search');

    const english = await search('search-asker', 'cherry blossoms Kyoto');
    expect(english[0]).toMatchObject({
      chat_id: 'search-trip',
      title: 'Kyoto trip',
      cursor: 2,
      role: 'assistant',
      current_chat: false,
    });
    expect(english[0]!.date).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(english[0]!.snippet).toContain('cherry blossoms');
    expect(english.every((hit) => hit.chat_id === 'search-trip')).toBe(true);

    const chinese = await search('search-asker', '机器学习的书');
    expect(chinese[0]).toMatchObject({ chat_id: 'search-zh', cursor: 1, role: 'user' });
    expect(chinese.every((hit) => hit.chat_id === 'search-zh')).toBe(true);
  });

  it('Scenario: a deleted session is no longer found; a new turn is found at once', async () => {
    await turn('search-gone', 'The vault code is marmalade', { content: 'Noted the marmalade code.' });
    expect((await search('search-asker-2', 'marmalade')).map((r) => r.chat_id)).toContain('search-gone');
    await request(t.httpUrl).delete('/api/sessions/search-gone').expect(204);
    const after = await search('search-asker-2', 'marmalade');
    // only the asking chat's own earlier request mentions the word now
    expect(after.every((r) => r.chat_id === 'search-asker-2')).toBe(true);
    expect(after.find((r) => r.chat_id === 'search-asker-2')?.current_chat).toBe(true);
    expect(t.app.get(SessionIndex).size).toBeGreaterThan(0);
  });
});
