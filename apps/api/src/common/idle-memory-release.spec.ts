import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuiltServer } from '../../test/support/server-process';
import { GROWTH_BYTES, IDLE_UTILISATION, IdleMemoryRelease, LOAD_UTILISATION, startIdleMemoryRelease, v8Probe, type IdleMemoryProbe } from './idle-memory-release';

const MB = 1024 * 1024;

/** A probe whose heap and loop load the test sets; `collect` shrinks the heap to `live`. */
function scriptedProbe(start: number) {
  const state = { heap: start, live: start, busy: 0, collections: 0, growth: [] as boolean[] };
  const probe: IdleMemoryProbe = {
    heapBytes: () => state.heap,
    utilisation: () => state.busy,
    collect: () => {
      state.collections++;
      state.heap = state.live;
    },
    youngGenerationGrowth: (allowed) => {
      state.growth.push(allowed);
    },
  };
  return { state, probe };
}

describe('IdleMemoryRelease', () => {
  it('Scenario: after a burst the heap is released once the event loop has been idle for an interval', () => {
    const { state, probe } = scriptedProbe(40 * MB);
    const release = new IdleMemoryRelease(probe);
    // the burst: the heap grows while the loop is busy
    state.busy = 0.9;
    state.heap = 40 * MB + GROWTH_BYTES + 12 * MB;
    state.live = 41 * MB;
    expect(release.check()).toBe(false);
    // the burst is over
    state.busy = 0.01;
    expect(release.check()).toBe(true);
    expect(state.collections).toBe(1);
    // released: nothing more to do until the heap grows again
    expect(release.check()).toBe(false);
    expect(state.collections).toBe(1);
  });

  it('Scenario: under load it never collects, however much the heap grew', () => {
    const { state, probe } = scriptedProbe(40 * MB);
    const release = new IdleMemoryRelease(probe);
    state.heap = 200 * MB;
    state.busy = IDLE_UTILISATION;
    for (let i = 0; i < 100; i++) expect(release.check()).toBe(false);
    expect(state.collections).toBe(0);
  });

  it('Scenario: growth within the threshold is left to V8, also after V8 shrank the heap itself', () => {
    const { state, probe } = scriptedProbe(40 * MB);
    const release = new IdleMemoryRelease(probe);
    state.heap = 40 * MB + GROWTH_BYTES;
    expect(release.check()).toBe(false);
    // V8 collected on its own: growth now counts from the smaller heap
    state.heap = 30 * MB;
    expect(release.check()).toBe(false);
    state.heap = 30 * MB + GROWTH_BYTES + 1;
    state.live = 30 * MB;
    expect(release.check()).toBe(true);
  });

  it('Scenario: the young generation may grow only while the server is under load, and is shrunk once it is idle', () => {
    const { state, probe } = scriptedProbe(40 * MB);
    const release = new IdleMemoryRelease(probe);
    // a single busy interval below the load share changes nothing
    state.busy = LOAD_UTILISATION - 0.01;
    expect(release.check()).toBe(false);
    expect(state.growth).toEqual([]);
    // under load: growth allowed once, however long the load lasts; never a collection meanwhile
    state.busy = 0.9;
    for (let i = 0; i < 10; i++) expect(release.check()).toBe(false);
    expect(state.growth).toEqual([true]);
    expect(state.collections).toBe(0);
    // idle again: pinned, then one collection (it shrinks the grown young generation), even with a heap that is
    // back within the growth threshold
    state.heap = 40 * MB + GROWTH_BYTES / 2;
    state.busy = 0.01;
    expect(release.check()).toBe(true);
    expect(state.growth).toEqual([true, false]);
    expect(state.collections).toBe(1);
    expect(release.check()).toBe(false);
    expect(state.collections).toBe(1);
  });

  it('Scenario: without --expose-gc nothing is started', () => {
    // Jest runs without the flag, as any entry point other than main.js does
    expect(v8Probe()).toBeNull();
    expect(startIdleMemoryRelease(null)).toBeNull();
  });

  it('Scenario: in a process with the flag set as main.js sets it, an idle heap that grew is returned', () => {
    ensureBuiltServer();
    const compiled = join(__dirname, '..', '..', 'dist', 'common', 'idle-memory-release.js');
    expect(existsSync(compiled)).toBe(true);
    // the same order as main.ts: the flag is set from inside the process, then the module is loaded and started.
    // The garbage is made to stay committed: a regular collection runs while it is still reachable, after which V8
    // has no reason to collect again in an idle process (without the release the heap stays at its grown size).
    const script = `
      require('node:v8').setFlagsFromString('--expose-gc');
      const { startIdleMemoryRelease, CHECK_MS } = require(${JSON.stringify(compiled)});
      const heap = () => require('node:v8').getHeapStatistics().total_heap_size;
      const stop = startIdleMemoryRelease();
      if (!stop) { process.stdout.write(JSON.stringify({ started: false })); process.exit(0); }
      const regularGc = require('node:vm').runInNewContext('gc');
      let junk = [];
      for (let i = 0; i < 400000; i++) junk.push({ text: 'garbage ' + i, list: [i, i + 1] });
      regularGc();
      const grown = heap();
      junk = null;
      const hasGc = typeof globalThis.gc === 'function';
      setTimeout(() => { process.stdout.write(JSON.stringify({ started: true, grown, after: heap(), hasGc })); stop(); }, CHECK_MS * 3);
    `;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(child.status).toBe(0);
    const result = JSON.parse(child.stdout.trim()) as { started: boolean; grown: number; after: number; hasGc: boolean };
    expect(result.started).toBe(true);
    // the application's global scope never gets `gc`
    expect(result.hasGc).toBe(false);
    expect(result.grown).toBeGreaterThan(GROWTH_BYTES * 2);
    expect(result.grown - result.after).toBeGreaterThan(GROWTH_BYTES);
  });
});
