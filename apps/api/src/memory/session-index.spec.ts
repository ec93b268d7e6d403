import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { MemoryStore } from './memory-store';
import { makeSnippet, SessionIndex } from './session-index';

describe(SessionIndex.name, () => {
  let dir: string;
  let store: MemoryStore;
  let index: SessionIndex;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-index-'));
    store = new MemoryStore({ memoryDir: dir } as AppConfig, () => new Date(2026, 6, 26, 12, 0));
  });

  afterEach(async () => {
    index?.onModuleDestroy();
    await store.onApplicationShutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function seed(): Promise<void> {
    await store.appendTurn('trip', { content: 'Plan a trip to Kyoto in spring' }, [], {
      content: 'Kyoto in spring: cherry blossoms at Maruyama park, book the ryokan early.',
    });
    await store.saveMetadata('trip', { title: 'Kyoto trip' });
    await store.appendTurn('code', { content: 'How do I parse JSON in TypeScript?' }, [], {
      content: 'Use JSON.parse and narrow the unknown result; parseHTTPResponse helpers can wrap it.',
    });
    await store.appendTurn('zh', { content: '我想学习机器学习，推荐一些书' }, [], { content: '推荐《机器学习》和《深度学习》这两本书。' });
  }

  it('Scenario: the index is built from every chat at start and ranks the right chat first (English)', async () => {
    await seed();
    index = new SessionIndex(store, { sessionIndexFile: join(dir, '.index', 'sessions.sqlite') });
    index.onApplicationBootstrap();
    await index.ready();
    expect(index.size).toBe(6);
    const hits = await index.search('cherry blossoms Kyoto');
    expect(hits[0]).toMatchObject({ chatId: 'trip', title: 'Kyoto trip', cursor: 2, role: 'assistant', date: '2026-07-26 12:00' });
    expect(hits[0]!.snippet).toContain('cherry blossoms');
    expect(hits.every((hit) => hit.chatId === 'trip')).toBe(true);
  });

  it('Scenario: Chinese queries match by CJK bigrams; camelCase is split', async () => {
    await seed();
    index = new SessionIndex(store, { sessionIndexFile: join(dir, '.index', 'sessions.sqlite') });
    await index.ready();
    const zh = await index.search('机器学习的书');
    expect(zh[0]).toMatchObject({ chatId: 'zh', title: null });
    expect(zh.every((hit) => hit.chatId === 'zh')).toBe(true);
    const camel = await index.search('http response');
    expect(camel[0]).toMatchObject({ chatId: 'code', cursor: 2 });
  });

  it('Scenario: appended turns are searchable at once without a rebuild; a deleted chat disappears', async () => {
    index = new SessionIndex(store, { sessionIndexFile: join(dir, '.index', 'sessions.sqlite') });
    await index.ready();
    expect(await index.search('sourdough')).toEqual([]);
    await store.appendTurn('bake', { content: 'My sourdough starter smells of acetone' }, [], { content: 'Feed it more often.' });
    const hits = await index.search('sourdough starter');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ chatId: 'bake', cursor: 1, role: 'user' });
    await store.deleteChat('bake');
    index.onSessionDeleted({ chatId: 'bake' });
    expect(await index.search('sourdough')).toEqual([]);
    expect(index.size).toBe(0);
  });

  it('Scenario: tool activity and summaries are not indexed, and a record is indexed once', async () => {
    index = new SessionIndex(store, { sessionIndexFile: join(dir, '.index', 'sessions.sqlite') });
    await index.ready();
    await store.appendTurn(
      'tools',
      { content: 'list files' },
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] },
        { role: 'tool', content: 'zebra.txt', tool_call_id: 'c1', name: 'list_dir' },
      ],
      { content: 'One file.' },
    );
    await store.appendSummary('tools', 'zebra summary', null);
    expect(await index.search('zebra')).toEqual([]);
    index.addRecords('tools', await store.readRecords('tools'));
    expect(index.size).toBe(2);
  });
});

describe('makeSnippet', () => {
  it('Scenario: the snippet is a window around the first match with ellipses', () => {
    const content = `${'lorem ipsum '.repeat(20)}the secret word is pineapple ${'dolor sit '.repeat(40)}`;
    const snippet = makeSnippet(content, ['pineapple']);
    expect(snippet.startsWith('… ')).toBe(true);
    expect(snippet.endsWith(' …')).toBe(true);
    expect(snippet).toContain('the secret word is pineapple');
    expect(snippet.length).toBeLessThan(320);
  });

  it('Scenario: a short text is returned whole', () => {
    expect(makeSnippet('  short\n text ', ['text'])).toBe('short text');
  });
});
