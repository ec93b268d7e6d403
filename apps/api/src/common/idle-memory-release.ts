/**
 * Gives the memory of a burst of work back once the server is idle again.
 *
 * V8 shrinks its heap after a burst only through its memory reducer, which waits about 8 s after the last full
 * collection and then for allocation to calm down: after 100 chats × 5 turns (`npm run bench -- server`) the server
 * stayed at ~133 MB resident for 10–15 s before coming back to ~111 MB. Here, every CHECK_MS, when the event loop was
 * idle over that interval (utilisation below IDLE_UTILISATION) and V8's heap has grown by more than GROWTH_BYTES since
 * it was last released, one full, memory-reducing collection runs (V8's "last resort" flavour: compaction, free pages
 * returned to the system): the server is back at its idle size within CHECK_MS of the burst's end.
 *
 * Cost: one collection (a few tens of ms on a small VM) per burst, at a moment nothing runs. Under load the loop is
 * never idle over a whole interval, so it never runs there; a quiet server only reads two counters every CHECK_MS.
 *
 * V8's `gc` function exists only with --expose-gc (main.ts sets the flag before anything runs); it is taken from a
 * fresh vm context, so the application's own global scope never has a `gc`. Without the flag (tests, another entry
 * point) `startIdleMemoryRelease` does nothing.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** how often the loop's idleness and the heap's growth are looked at */
export const CHECK_MS = 250;
/** below this share of busy time over the last interval, the server counts as idle */
export const IDLE_UTILISATION = 0.05;
/** heap growth since the last release that is worth a collection (smaller growth is left to V8) */
export const GROWTH_BYTES = 8 * 1024 * 1024;

type V8Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** What the releaser reads and does; the real ones by default, scripted ones in tests. */
export interface IdleMemoryProbe {
  /** V8's committed heap size */
  heapBytes(): number;
  /** the busy share of the event loop since the previous call (0..1) */
  utilisation(): number;
  /** one full, memory-reducing collection */
  collect(): void;
}

/**
 * Decides, at each check, whether to collect: only when idle over the last interval and the heap has grown by more
 * than GROWTH_BYTES since the last collection (or since the start).
 */
export class IdleMemoryRelease {
  private baseline: number;

  constructor(private readonly probe: IdleMemoryProbe) {
    this.baseline = probe.heapBytes();
  }

  /** One check; true when it collected. */
  check(): boolean {
    const busy = this.probe.utilisation();
    const heap = this.probe.heapBytes();
    if (heap < this.baseline) this.baseline = heap;
    if (busy >= IDLE_UTILISATION || heap - this.baseline <= GROWTH_BYTES) return false;
    this.probe.collect();
    this.baseline = this.probe.heapBytes();
    return true;
  }
}

function loadGc(): V8Gc | null {
  try {
    return runInNewContext('typeof gc === "function" ? gc : null') as V8Gc | null;
  } catch {
    return null;
  }
}

/** The real probe, or null when V8's `gc` is not available (no --expose-gc). */
export function v8Probe(): IdleMemoryProbe | null {
  const gc = loadGc();
  if (!gc) return null;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    heapBytes: () => getHeapStatistics().total_heap_size,
    utilisation: () => {
      const now = performance.eventLoopUtilization();
      const delta = performance.eventLoopUtilization(now, last);
      last = now;
      return delta.utilization;
    },
    collect: () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }),
  };
}

/** Starts the checks (an unref'd timer: it never keeps the process alive); returns the stop, or null without `gc`. */
export function startIdleMemoryRelease(probe: IdleMemoryProbe | null = v8Probe()): (() => void) | null {
  if (!probe) return null;
  const release = new IdleMemoryRelease(probe);
  const timer = setInterval(() => release.check(), CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
