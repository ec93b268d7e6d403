import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DreamRun } from '@cashcode/contracts';
import type { AppConfig } from '../config/app-config';
import { DreamStore } from './dream-store';

function run(id: string, outcome: DreamRun['outcome'] = 'updated'): DreamRun {
  return {
    id,
    trigger: 'manual',
    started_at: '2026-07-26T10:00:00.000Z',
    finished_at: '2026-07-26T10:00:01.000Z',
    outcome,
    detail: null,
    model: null,
    model_source: null,
    records_read: 1,
    cursors: {},
    entries_before: 0,
    entries_after: 1,
    diff: '',
    revertible: outcome === 'updated',
  };
}

describe(DreamStore.name, () => {
  let dir: string;
  let store: DreamStore;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-dream-store-'));
    store = new DreamStore({ memoryDir: dir } as AppConfig);
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: .dream_cursor is compact JSON; a missing or invalid file reads as empty', async () => {
    expect(await store.readCursor()).toEqual({});
    await store.updateCursor(() => ({ a: 3, 'chat-b': 12 }));
    expect(await fs.readFile(join(dir, '.dream_cursor'), 'utf8')).toBe('{"a":3,"chat-b":12}');
    await fs.writeFile(join(dir, '.dream_cursor'), 'not json');
    expect(await store.readCursor()).toEqual({});
  });

  it('Scenario: concurrent cursor updates are serialised and none is lost', async () => {
    await Promise.all(['a', 'b', 'c', 'd'].map((chat, i) => store.updateCursor((cursor) => ({ ...cursor, [chat]: i + 1 }))));
    expect(await store.readCursor()).toEqual({ a: 1, b: 2, c: 3, d: 4 });
  });

  it('Scenario: runs are listed newest first; a torn last line is skipped', async () => {
    const ids = [1, 2, 3].map((n) => `178505280000${n}-0000000${n}`);
    for (const id of ids) await store.appendRun(run(id));
    await fs.appendFile(join(dir, '.dreams', 'runs.jsonl'), '{"id": "torn');
    expect((await store.listRuns()).map((r) => r.id)).toEqual([...ids].reverse());
    const next = '1785052800004-00000004';
    await store.appendRun(run(next));
    expect((await store.listRuns(1)).map((r) => r.id)).toEqual([next]);
    await fs.appendFile(join(dir, '.dreams', 'runs.jsonl'), '{"id": "torn again');
    expect((await store.listRuns(2)).map((r) => r.id)).toEqual([next, ids[2]]);
    expect(await store.findRun(ids[1]!)).toMatchObject({ id: ids[1] });
    expect(await store.findRun('../../etc')).toBeNull();
  });

  it('Scenario: old runs and their snapshots are pruned beyond the limit', async () => {
    store.maxRuns = 4;
    const ids = Array.from({ length: 6 }, (_, n) => `17850528000${String(n).padStart(2, '0')}-0000000${n}`);
    for (const id of ids) {
      await store.saveSnapshot(id, `before ${id}`);
      await store.appendRun(run(id));
    }
    const kept = (await store.listRuns()).map((r) => r.id);
    expect(kept).toEqual(ids.slice(2).reverse());
    expect(await store.readSnapshot(ids[0]!)).toBeNull();
    expect(await store.readSnapshot(ids[5]!)).toBe(`before ${ids[5]}`);
  });
});
