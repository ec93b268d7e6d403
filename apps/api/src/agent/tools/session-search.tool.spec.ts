import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { createMemoryStores, type MemoryStores } from '../../memory/memory-stores';
import { SessionIndex } from '../../memory/session-index';
import { ToolInputError, type ToolResult } from '../agent-tool';
import { SESSION_SEARCH_EMPTY_QUERY, SessionSearchTool } from './session-search.tool';

describe(SessionSearchTool.name, () => {
  let dir: string;
  let tool: SessionSearchTool;
  let stores: MemoryStores;
  let index: SessionIndex;
  const ctx = (chatId = 'asker') => ({ chatId, turnId: '0'.repeat(32), signal: new AbortController().signal });

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-session-search-'));
    stores = createMemoryStores({ memoryDir: dir } as AppConfig, () => new Date(2026, 6, 26, 9, 30));
    for (let i = 1; i <= 8; i++) {
      await stores.history.appendTurn(`chat-${i}`, { content: `note ${i} about the lighthouse keeper` }, [], { content: 'ok' });
    }
    index = new SessionIndex(stores.reader, stores.writer, stores.metadata, stores.chats, { sessionIndexFile: join(dir, '.index', 'sessions.sqlite') });
    await index.ready();
    tool = new SessionSearchTool(index);
  });

  afterEach(async () => {
    index.onModuleDestroy();
    await stores.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: results are JSON with chat id, title, cursor, date, role and snippet; limit defaults to 5', async () => {
    const result = (await tool.execute({ query: 'lighthouse keeper' }, ctx('chat-2'))) as ToolResult;
    const parsed = JSON.parse(result.model) as { query: string; results: Array<Record<string, unknown>> };
    expect(parsed.query).toBe('lighthouse keeper');
    expect(parsed.results).toHaveLength(5);
    expect(parsed.results[0]).toEqual({
      chat_id: expect.stringMatching(/^chat-\d$/),
      title: null,
      cursor: 1,
      date: '2026-07-26 09:30',
      role: 'user',
      current_chat: expect.any(Boolean),
      snippet: expect.stringContaining('lighthouse keeper'),
    });
    expect(result.public).toBe('Found 5 matching messages.');
    expect(tool.readOnly).toBe(true);
  });

  it('Scenario: limit is honoured within 1..20; an empty query is a tool error', async () => {
    const two = (await tool.execute({ query: 'lighthouse', limit: '2' }, ctx())) as ToolResult;
    expect((JSON.parse(two.model) as { results: unknown[] }).results).toHaveLength(2);
    await expect(tool.execute({ query: 'x', limit: 21 }, ctx())).rejects.toBeInstanceOf(ToolInputError);
    await expect(tool.execute({}, ctx())).rejects.toBeInstanceOf(ToolInputError);
    expect(await tool.execute({ query: '  ' }, ctx())).toEqual({ model: SESSION_SEARCH_EMPTY_QUERY, ok: false });
    const none = (await tool.execute({ query: 'zeppelin' }, ctx())) as ToolResult;
    expect(JSON.parse(none.model)).toEqual({ query: 'zeppelin', results: [] });
    expect(none.public).toBe('No matching messages found.');
  });
});
