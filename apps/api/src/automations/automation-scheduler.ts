/**
 * One timer for every automation (openspec automations "Requirement: One timer"): the due times sit in a min-heap and a
 * single timer is armed for the earliest; when it fires every entry that is due is handed over, and the timer is armed
 * again for the next. Changing or removing an automation replaces its entry (older entries are skipped when they come
 * up). Idle, the scheduler costs one timer wake-up per due time — nothing per automation per minute.
 *
 * Time comes from an AutomationClock, so tests can move it.
 */

/** Where the scheduler gets the time and its one timer from (the real clock unless a test injects one). */
export interface AutomationClock {
  now(): number;
  setTimer(callback: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** Injection token of the AutomationClock. */
export const AUTOMATION_CLOCK = Symbol('AutomationClock');

export const REAL_CLOCK: AutomationClock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** setTimeout's longest delay; a due time further away is reached in steps. */
const MAX_TIMER_MS = 2_147_483_647;

interface Entry {
  due: number;
  id: string;
  version: number;
}

export class AutomationScheduler {
  private readonly heap: Entry[] = [];
  /** the current entry version of each scheduled automation */
  private readonly versions = new Map<string, number>();
  private nextVersion = 1;
  private timer: unknown = null;
  /** when the armed timer fires */
  private armedFor: number | null = null;
  private stopped = false;
  /** timers armed over the scheduler's life (the bench and the tests read it) */
  armCount = 0;

  constructor(
    private readonly clock: AutomationClock,
    private readonly onDue: (id: string, due: number) => void,
  ) {}

  /** Schedules (or reschedules) an automation at `due`; null unschedules it. */
  set(id: string, due: number | null): void {
    if (due === null) {
      this.remove(id);
      return;
    }
    const version = this.nextVersion++;
    this.versions.set(id, version);
    this.push({ due, id, version });
    this.rearm();
  }

  remove(id: string): void {
    // the heap entry stays until it comes up (then skipped); when it is the earliest the timer is re-armed
    this.versions.delete(id);
    this.dropStale();
    this.rearm();
  }

  /** The automations scheduled now. */
  get size(): number {
    return this.versions.size;
  }

  /** Entries in the heap (live and replaced ones not yet dropped). */
  get heapSize(): number {
    return this.heap.length;
  }

  /** Timers armed right now: 0 or 1, whatever the number of automations. */
  get activeTimers(): number {
    return this.timer === null ? 0 : 1;
  }

  /** The earliest due time (null: none). */
  get earliest(): number | null {
    this.dropStale();
    return this.heap[0]?.due ?? null;
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = null;
    const now = this.clock.now();
    const due: Entry[] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.due > now) break;
      this.pop();
      this.versions.delete(top.id);
      due.push(top);
    }
    for (const entry of due) this.onDue(entry.id, entry.due);
    this.rearm();
  }

  private rearm(): void {
    if (this.stopped) return;
    const earliest = this.earliest;
    if (earliest === null) {
      this.disarm();
      return;
    }
    if (this.timer !== null && this.armedFor === earliest) return;
    this.disarm();
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, earliest - this.clock.now()));
    this.armedFor = earliest;
    this.armCount++;
    this.timer = this.clock.setTimer(() => this.fire(), delay);
  }

  private disarm(): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedFor = null;
  }

  /** Pops stale entries (removed or replaced automations) off the top. */
  private dropStale(): void {
    for (;;) {
      const top = this.heap[0];
      if (!top || this.versions.get(top.id) === top.version) return;
      this.pop();
    }
  }

  private push(entry: Entry): void {
    // replaced entries wait in the heap until they come up; when they outnumber the live ones, drop them at once
    if (this.heap.length > 2 * this.versions.size + 64) this.compact();
    this.siftUp(entry);
  }

  private siftUp(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((heap[parent] as Entry).due <= entry.due) break;
      heap[index] = heap[parent] as Entry;
      index = parent;
    }
    heap[index] = entry;
  }

  /** Keeps only the live entries (each automation's current one) and rebuilds the heap. */
  private compact(): void {
    const live = this.heap.filter((entry) => this.versions.get(entry.id) === entry.version);
    this.heap.length = 0;
    for (const entry of live) this.siftUp(entry);
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as Entry).due < (heap[left] as Entry).due ? right : left;
      if ((heap[child] as Entry).due >= last.due) break;
      heap[index] = heap[child] as Entry;
      index = child;
    }
    heap[index] = last;
  }
}
