import { Logger } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { ChatMetadataStore } from './chat-metadata.store';
import { createMemoryStores, type MemoryStores } from './memory-stores';

const FIXED_NOW = new Date(2026, 6, 26, 12, 5, 30);

/** stores made by the running test; afterEach shuts them down (their append handles stay open otherwise) */
const openStores: MemoryStores[] = [];

function makeStore(memoryDir: string): MemoryStores {
  const stores = createMemoryStores({ memoryDir } as AppConfig, () => FIXED_NOW);
  openStores.push(stores);
  return stores;
}

describe(ChatMetadataStore.name, () => {
  let dir: string;
  let store: MemoryStores;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-memory-'));
    store = makeStore(dir);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(openStores.splice(0).map((made) => made.shutdown()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: metadata.json is replaced atomically as pretty JSON', async () => {
    const writes = Array.from({ length: 30 }, (_, i) => store.metadata.save('meta', { title: `title ${i}`, n: i }));
    const readers = Array.from({ length: 30 }, async () => {
      try {
        const text = await fs.readFile(join(dir, 'meta', 'metadata.json'), 'utf8');
        expect(() => JSON.parse(text) as unknown).not.toThrow();
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOENT');
      }
    });
    await Promise.all([...writes, ...readers]);
    const text = await fs.readFile(join(dir, 'meta', 'metadata.json'), 'utf8');
    expect(text).toBe(`${JSON.stringify({ title: 'title 29', n: 29 }, null, 2)}\n`);
    expect((await fs.readdir(join(dir, 'meta'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('Scenario: unreadable metadata is treated as empty', async () => {
    await fs.mkdir(join(dir, 'm2'));
    await fs.writeFile(join(dir, 'm2', 'metadata.json'), '{not json');
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    expect((await store.history.getChat('m2')).metadata).toEqual({});
  });

  it('Scenario: rename updates disk and the cached metadata', async () => {
    const state = await store.history.getChat('r1');
    await store.metadata.save('r1', { title: 'old', activated_tools: { a: 1 } });
    await store.metadata.renameChat('r1', 'new title');
    expect(state.metadata).toEqual({ title: 'new title', activated_tools: { a: 1 } });
    expect(JSON.parse(await fs.readFile(join(dir, 'r1', 'metadata.json'), 'utf8'))).toEqual(state.metadata);
    await expect(store.metadata.renameChat('missing', 'x')).rejects.toMatchObject({ code: 'session_not_found' });
  });
});
