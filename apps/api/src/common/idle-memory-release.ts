/**
 * The heap follows the load: V8's young generation may grow while the server is busy, and the memory of a burst of
 * work goes back once the server is idle again.
 *
 * Young generation. main.ts pins it at its initial size (`--semi-space-growth-factor=1`): V8 doubles it (up to
 * 2 × 16 MiB) whenever much survives a scavenge and never shrinks it while the process runs, which costs an idle
 * server ~10 MB resident. Under load the pin costs CPU instead (with many turns in flight a 1 MiB semi-space fills every
 * turn or so, and every scavenge copies the turns' live state). So when the event loop was busy over a whole CHECK_MS
 * interval (utilisation at or above LOAD_UTILISATION) the growth factor goes back to V8's default (2), and once the
 * server is idle it is pinned again and the collection below shrinks the young generation to its initial size. V8
 * reads the factor each time it considers growing. The figures of this trade are in bench/README.md.
 *
 * Memory release. V8 shrinks its heap after a burst only through its memory reducer, which waits about 8 s after the
 * last full collection and then for allocation to calm down (10–15 s after a burst). Here, every CHECK_MS, when the
 * event loop was idle over that interval (utilisation below IDLE_UTILISATION) and V8's heap has grown by more than GROWTH_BYTES since it was last
 * released (or the young generation was allowed to grow), one full, memory-reducing collection runs (V8's "last
 * resort" flavour: compaction, free pages returned to the system, the young generation shrunk): the server is back at
 * its idle size within a few CHECK_MS of the burst's end.
 *
 * Cost: one collection (a few tens of ms on a small VM) per burst, at a moment nothing runs. Under load the loop is
 * never idle over a whole interval, so it never collects there; a quiet server only reads two counters every CHECK_MS.
 *
 * V8's `gc` function exists only with --expose-gc (main.ts sets the flag before anything runs); it is taken from a
 * fresh vm context, so the application's own global scope never has a `gc`. Without the flag (tests, another entry
 * point) `startIdleMemoryRelease` does nothing and the young generation stays pinned.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** how often the loop's idleness and the heap's growth are looked at (reading two counters: microseconds) */
export const CHECK_MS = 100;
/** below this share of busy time over the last interval, the server counts as idle */
export const IDLE_UTILISATION = 0.05;
/** heap growth since the last release that is worth a collection (smaller growth is left to V8) */
export const GROWTH_BYTES = 8 * 1024 * 1024;
/** at or above this share of busy time over the last interval, the server counts as under load */
export const LOAD_UTILISATION = 0.5;

type V8Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** What the releaser reads and does; the real ones by default, scripted ones in tests. */
export interface IdleMemoryProbe {
  /** V8's committed heap size */
  heapBytes(): number;
  /** the busy share of the event loop since the previous call (0..1) */
  utilisation(): number;
  /** one full, memory-reducing collection (it also shrinks a grown young generation) */
  collect(): void;
  /** lets V8 grow the young generation (true) or pins it at its current size (false) */
  youngGenerationGrowth(allowed: boolean): void;
}

/**
 * Decides, at each check, whether the young generation may grow (only while the loop is busy) and whether to
 * collect: only when idle over the last interval, and the heap has grown by more than GROWTH_BYTES since the last
 * collection (or since the start) or the young generation was allowed to grow meanwhile.
 */
export class IdleMemoryRelease {
  private baseline: number;
  private growing = false;

  constructor(private readonly probe: IdleMemoryProbe) {
    this.baseline = probe.heapBytes();
  }

  /** One check; true when it collected. */
  check(): boolean {
    const busy = this.probe.utilisation();
    if (busy >= LOAD_UTILISATION && !this.growing) {
      this.growing = true;
      this.probe.youngGenerationGrowth(true);
    }
    const heap = this.probe.heapBytes();
    if (heap < this.baseline) this.baseline = heap;
    if (busy >= IDLE_UTILISATION) return false;
    if (!this.growing && heap - this.baseline <= GROWTH_BYTES) return false;
    if (this.growing) {
      this.growing = false;
      this.probe.youngGenerationGrowth(false);
    }
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
    // 2 is V8's default; 1 is main.ts's pin
    youngGenerationGrowth: (allowed) => setFlagsFromString(`--semi-space-growth-factor=${allowed ? 2 : 1}`),
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
