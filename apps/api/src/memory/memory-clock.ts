/** The clock of record timestamps and MEMORY.md lines (optional provider; tests bind a fixed one). */
export const MEMORY_CLOCK = Symbol('MEMORY_CLOCK');
export type MemoryClock = () => Date;

/** The bound clock, or the system clock when none is bound. */
export function memoryClock(clock: MemoryClock | undefined): MemoryClock {
  return clock ?? (() => new Date());
}
