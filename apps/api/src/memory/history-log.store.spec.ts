import { Logger } from '@nestjs/common';
import nodeFs from 'node:fs';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { line, readLines } from '../../test/support/history-files';
import type { AppConfig } from '../config/app-config';
import { parseHistoryLine } from './history-record';
import { HistoryLogStore } from './history-log.store';
import type { ChatMessage, ToolCallRecord } from './memory.types';
import { createMemoryStores, type MemoryStores } from './memory-stores';

const FIXED_NOW = new Date(2026, 6, 26, 12, 5, 30);

/** stores made by the running test; afterEach shuts them down (their append handles stay open otherwise) */
const openStores: MemoryStores[] = [];

function makeStore(memoryDir: string): MemoryStores {
  const stores = createMemoryStores({ memoryDir } as AppConfig, () => FIXED_NOW);
  openStores.push(stores);
  return stores;
}

describe(HistoryLogStore.name, () => {
  let dir: string;
  let store: MemoryStores;
  const historyOf = (chatId: string) => join(dir, chatId, 'history.jsonl');

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-memory-'));
    store = makeStore(dir);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(openStores.splice(0).map((made) => made.shutdown()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: loading an unknown chat creates nothing on disk', async () => {
    const state = await store.history.getChat('fresh');
    expect(state).toEqual({ chatId: 'fresh', history: [], metadata: {} });
    await expect(fs.stat(join(dir, 'fresh'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.chats.chatExists('fresh')).toBe(false);
  });

  it('Scenario: rejects a chat id outside the allowed pattern before touching the disk', async () => {
    await expect(store.history.getChat('../etc')).rejects.toMatchObject({ code: 'invalid_chat_id', httpStatus: 400 });
    await expect(store.history.appendTurn('a/b', { content: 'x' }, [], { content: 'y' })).rejects.toMatchObject({
      code: 'invalid_chat_id',
    });
    await expect(store.chats.deleteChat('x'.repeat(65))).rejects.toMatchObject({ code: 'invalid_chat_id' });
  });

  it('Scenario: a plain turn is one user and one assistant record with consecutive cursors', async () => {
    await store.history.appendTurn('c1', { content: 'hello' }, [], { content: 'hi there' });
    expect(await readLines(historyOf('c1'))).toEqual([
      { cursor: 1, timestamp: '2026-07-26 12:05', role: 'user', content: 'hello' },
      { cursor: 2, timestamp: '2026-07-26 12:05', role: 'assistant', content: 'hi there' },
    ]);
    await store.history.flush('c1');
    expect((await fs.readFile(join(dir, 'c1', '.cursor'), 'utf8')).trim()).toBe('2');
  });

  it('Scenario: an inline append is written on the calling thread, a default one through the thread pool; both are on disk', async () => {
    const writeSync = jest.spyOn(nodeFs, 'writeSync');
    await store.history.appendTurn('c9', { content: 'one' }, [], { content: 'first' }, { inline: true });
    expect(writeSync).toHaveBeenCalledTimes(1);
    expect(String(writeSync.mock.calls[0]?.[1])).toContain('"content":"first"');
    await store.history.appendTurn('c9', { content: 'two' }, [], { content: 'second' });
    expect(writeSync).toHaveBeenCalledTimes(1);
    expect((await readLines(historyOf('c9'))).map((r) => [r.cursor, r.content])).toEqual([
      [1, 'one'],
      [2, 'first'],
      [3, 'two'],
      [4, 'second'],
    ]);
    expect((await makeStore(dir).history.getChat('c9')).history).toHaveLength(4);
  });

  it('Scenario: a traced turn keeps tool activity and receipts, and the cache equals a reload', async () => {
    const calls: ToolCallRecord[] = [{ id: 'call_1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }];
    const durable: ChatMessage[] = [
      { role: 'assistant', content: '', tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_1', name: 'list_dir', content: '[file] a.txt' },
    ];
    const state = await store.history.getChat('c2');
    await store.history.appendTurn(
      'c2',
      { content: 'list', mentioned_skills: [{ name: 'weather', label: 'Weather' }] },
      durable,
      { content: 'one file' },
    );
    const records = await readLines(historyOf('c2'));
    expect(records.map((r) => [r.cursor, r.role, r.content])).toEqual([
      [1, 'user', 'list'],
      [2, 'tool_calls', '[TOOL_CALLS: list_dir]'],
      [3, 'tool', '[file] a.txt'],
      [4, 'assistant', 'one file'],
    ]);
    expect(records[0]!.mentioned_skills).toEqual([{ name: 'weather', label: 'Weather' }]);
    expect(records[0]).not.toHaveProperty('selected_mcp_connectors');
    expect(state.history).toEqual([
      { role: 'user', content: 'list' },
      { role: 'assistant', content: '[TOOL_CALLS: list_dir]', tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_1', name: 'list_dir', content: '[file] a.txt' },
      { role: 'assistant', content: 'one file' },
    ]);
    expect((await makeStore(dir).history.getChat('c2')).history).toEqual(state.history);
  });

  it('Scenario: a cancelled partial answer is stored marked cancelled', async () => {
    await store.history.appendTurn('c3', { content: 'long story' }, [], { content: 'Once upon', cancelled: true });
    const records = await readLines(historyOf('c3'));
    expect(records[1]).toMatchObject({ role: 'assistant', content: 'Once upon', cancelled: true });
  });

  it('Scenario: cursors keep increasing across a restart', async () => {
    await store.history.appendTurn('c4', { content: 'a' }, [], { content: 'b' });
    await store.history.flush();
    const restarted = makeStore(dir);
    await restarted.history.appendTurn('c4', { content: 'c' }, [], { content: 'd' });
    await restarted.history.flush();
    // without the .cursor hint the last record decides
    await fs.rm(join(dir, 'c4', '.cursor'));
    await makeStore(dir).history.appendTurn('c4', { content: 'e' }, [], { content: 'f' });
    expect((await readLines(historyOf('c4'))).map((r) => r.cursor)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('Scenario: a stale .cursor hint never makes cursors go backwards', async () => {
    await fs.mkdir(join(dir, 'c5'));
    await fs.writeFile(historyOf('c5'), line({ cursor: 7, role: 'user', content: 'x' }));
    await fs.writeFile(join(dir, 'c5', '.cursor'), '3');
    await store.history.appendTurn('c5', { content: 'y' }, [], { content: 'z' });
    expect((await readLines(historyOf('c5'))).map((r) => r.cursor)).toEqual([7, 8, 9]);
  });

  it('Scenario: a torn final line is dropped on load and repaired before the next append', async () => {
    await fs.mkdir(join(dir, 'torn'));
    const good = line({ cursor: 1, role: 'user', content: 'hi' }) + line({ cursor: 2, role: 'assistant', content: 'yo' });
    await fs.writeFile(historyOf('torn'), `${good}{"cursor": 3, "role": "user", "cont`);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const state = await store.history.getChat('torn');
    expect(state.history).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'yo' },
    ]);
    expect(warn.mock.calls.some(([message]) => String(message).includes('event=memory.history.torn_tail chat_id=torn'))).toBe(true);
    await store.history.appendTurn('torn', { content: 'again' }, [], { content: 'ok' });
    const records = await readLines(historyOf('torn'));
    expect(records.map((r) => [r.cursor, r.content])).toEqual([
      [1, 'hi'],
      [2, 'yo'],
      [3, 'again'],
      [4, 'ok'],
    ]);
  });

  it('Scenario: a malformed line in the middle is skipped and reported for that chat only', async () => {
    await fs.mkdir(join(dir, 'bad'));
    await fs.writeFile(
      historyOf('bad'),
      line({ cursor: 1, role: 'user', content: 'a' }) + 'garbage here\n' + line({ cursor: 2, role: 'assistant', content: 'b' }),
    );
    await store.history.appendTurn('good', { content: 'x' }, [], { content: 'y' });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const bad = await store.history.getChat('bad');
    const good = await makeStore(dir).history.getChat('good');
    expect(bad.history.map((m) => m.content)).toEqual(['a', 'b']);
    expect(good.history.map((m) => m.content)).toEqual(['x', 'y']);
    const reports = warn.mock.calls.map(([message]) => String(message)).filter((m) => m.includes('malformed_line'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('chat_id=bad');
    // the malformed line stays where it is; appends go after it
    await store.history.appendTurn('bad', { content: 'c' }, [], { content: 'd' });
    const text = await fs.readFile(historyOf('bad'), 'utf8');
    expect(text.split('\n')[1]).toBe('garbage here');
    expect(text.trimEnd().split('\n').slice(-2).map((l) => parseHistoryLine(l)?.cursor)).toEqual([3, 4]);
  });

  it('Scenario: smart load starts from the last summary and its keep_from_cursor', async () => {
    await fs.mkdir(join(dir, 'sum'));
    await fs.writeFile(
      historyOf('sum'),
      line({ cursor: 1, role: 'user', content: 'old question' }) +
        line({ cursor: 2, role: 'assistant', content: 'old answer' }) +
        line({ cursor: 3, role: 'user', content: 'kept question' }) +
        line({ cursor: 4, role: 'assistant', content: 'kept answer' }) +
        line({ cursor: 5, role: 'summary', content: 'first summary', keep_from_cursor: 1 }) +
        line({ cursor: 6, role: 'summary', content: 'the user asked things', keep_from_cursor: 3 }) +
        line({ cursor: 7, role: 'user', content: 'new question' }) +
        line({ cursor: 8, role: 'assistant', content: 'new answer' }),
    );
    const state = await store.history.getChat('sum');
    expect(state.history).toEqual([
      { role: 'assistant', content: '[History summary] the user asked things' },
      { role: 'user', content: 'kept question' },
      { role: 'assistant', content: 'kept answer' },
      { role: 'user', content: 'new question' },
      { role: 'assistant', content: 'new answer' },
    ]);
  });

  it('Scenario: without keep_from_cursor only records after the summary are kept', async () => {
    await fs.mkdir(join(dir, 'sum2'));
    await fs.writeFile(
      historyOf('sum2'),
      line({ cursor: 1, role: 'user', content: 'old' }) +
        line({ cursor: 2, role: 'summary', content: 'S' }) +
        line({ cursor: 3, role: 'user', content: 'new' }),
    );
    expect((await store.history.getChat('sum2')).history).toEqual([
      { role: 'assistant', content: '[History summary] S' },
      { role: 'user', content: 'new' },
    ]);
  });

  it('Scenario: smart load of a consolidated chat reads only the tail of a large history', async () => {
    await fs.mkdir(join(dir, 'big'));
    const filler = 'x'.repeat(200);
    const parts: string[] = [];
    for (let cursor = 1; cursor <= 20_000; cursor++) parts.push(line({ cursor, role: 'user', content: filler }));
    parts.push(line({ cursor: 20_001, role: 'summary', content: 'summary', keep_from_cursor: 19_995 }));
    parts.push(line({ cursor: 20_002, role: 'user', content: 'latest' }));
    await fs.writeFile(historyOf('big'), parts.join(''));
    const size = (await fs.stat(historyOf('big'))).size;
    expect(size).toBeGreaterThan(4_000_000);

    const probe = await fs.open(historyOf('big'), 'r');
    const handlePrototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<{ bytesRead: number }> };
    await probe.close();
    let bytesRead = 0;
    const original = handlePrototype.read;
    jest.spyOn(handlePrototype, 'read').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      const result = await original.apply(this, args);
      bytesRead += result.bytesRead;
      return result;
    });

    const state = await store.history.getChat('big');
    expect(state.history.map((m) => m.content)).toEqual([
      '[History summary] summary',
      filler,
      filler,
      filler,
      filler,
      filler,
      filler,
      'latest',
    ]);
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThanOrEqual(store.reader.chunkBytes * 2);
  });

  it('Scenario: concurrent appends to one chat keep their order and cursors', async () => {
    const state = await store.history.getChat('busy');
    await Promise.all(
      Array.from({ length: 25 }, (_, i) => store.history.appendTurn('busy', { content: `q${i}` }, [], { content: `a${i}` })),
    );
    const records = await readLines(historyOf('busy'));
    expect(records.map((r) => r.cursor)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(records.map((r) => r.content)).toEqual(Array.from({ length: 25 }, (_, i) => [`q${i}`, `a${i}`]).flat());
    expect(state.history.map((m) => m.content)).toEqual(records.map((r) => r.content));
  });

  it('Scenario: a summary append followed by a reload swaps in the consolidated history', async () => {
    const state = await store.history.getChat('cons');
    await store.history.appendTurn('cons', { content: 'q1' }, [], { content: 'a1' });
    await store.history.appendTurn('cons', { content: 'q2' }, [], { content: 'a2' });
    const summary = await store.history.appendSummary('cons', 'talked twice', 3);
    expect(summary).toMatchObject({ cursor: 5, role: 'summary', keep_from_cursor: 3 });
    await store.history.reloadHistory('cons');
    expect(state.history.map((m) => m.content)).toEqual(['[History summary] talked twice', 'q2', 'a2']);
  });

  it('evicts the least recently used chats beyond the cache size', async () => {
    store.lanes.maxCachedChats = 2;
    const first = await store.history.getChat('e1');
    await store.history.getChat('e2');
    await store.history.getChat('e3');
    expect(await store.history.getChat('e1')).not.toBe(first);
  });
});
