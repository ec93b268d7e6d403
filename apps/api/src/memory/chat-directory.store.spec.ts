import { Logger } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLines } from '../../test/support/history-files';
import type { AppConfig } from '../config/app-config';
import { ChatDirectoryStore } from './chat-directory.store';
import { createMemoryStores, type MemoryStores } from './memory-stores';

const FIXED_NOW = new Date(2026, 6, 26, 12, 5, 30);

/** stores made by the running test; afterEach shuts them down (their append handles stay open otherwise) */
const openStores: MemoryStores[] = [];

function makeStore(memoryDir: string): MemoryStores {
  const stores = createMemoryStores({ memoryDir } as AppConfig, () => FIXED_NOW);
  openStores.push(stores);
  return stores;
}

describe(ChatDirectoryStore.name, () => {
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

  it('Scenario: delete removes the chat, forgets it, and a late append of a running turn writes nothing', async () => {
    await store.history.getChat('d1');
    await store.history.appendTurn('d1', { content: 'secret' }, [], { content: 'noted' });
    await store.chats.deleteChat('d1');
    expect(await store.chats.chatExists('d1')).toBe(false);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    // the turn that was running when the session was deleted finishes afterwards
    expect(await store.history.appendTurn('d1', { content: 'late' }, [], { content: 'late answer' })).toEqual([]);
    expect(await store.chats.chatExists('d1')).toBe(false);
    // a new conversation under the same id starts empty
    const fresh = await store.history.getChat('d1');
    expect(fresh.history).toEqual([]);
    await store.history.appendTurn('d1', { content: 'new' }, [], { content: 'start' });
    expect((await readLines(historyOf('d1'))).map((r) => [r.cursor, r.content])).toEqual([
      [1, 'new'],
      [2, 'start'],
    ]);
    await expect(store.chats.deleteChat('nope')).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('lists chat directories only, with title and last update', async () => {
    await store.history.appendTurn('s1', { content: 'a' }, [], { content: 'b' });
    await store.history.saveMetadata('s2', { title: 'Named' });
    await fs.mkdir(join(dir, '.hidden'));
    await fs.mkdir(join(dir, 'not a chat id'));
    await fs.writeFile(join(dir, 'MEMORY.md'), 'x');
    const sessions = await store.chats.listSessions();
    expect(sessions.map((s) => [s.chatId, s.title]).sort()).toEqual([
      ['s1', null],
      ['s2', 'Named'],
    ]);
    expect(sessions.every((s) => Number.isFinite(s.updatedAt.getTime()))).toBe(true);
    expect(await makeStore(join(dir, 'missing')).chats.listSessions()).toEqual([]);
  });
});
