/**
 * Young-generation collection while the server is idle.
 *
 * A turn allocates about 1 MB of short-lived objects (mostly the model SDK's stream parsing), about one young-
 * generation collection (a pause of roughly 0.5 ms on a small VM) per turn. Left to V8, that pause lands in the middle
 * of a later turn. When the last running turn has ended, collectYoungGenerationWhenIdle() runs the collection right
 * away instead, after the pending I/O callbacks: the next turn starts with an empty young generation, and the pause
 * falls where nobody waits. With turns running back to back under load it is never asked for.
 *
 * V8's `gc` function exists only when it runs with --expose-gc (main.ts sets the flag before the server starts); it
 * is taken from a fresh vm context, so the application's own global scope never gets a `gc`. Without the flag (tests,
 * another entry point) this is a no-op.
 */
import { runInNewContext } from 'node:vm';

type V8Gc = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let minorGc: (() => void) | null | undefined;

function loadMinorGc(): (() => void) | null {
  try {
    const gc = runInNewContext('typeof gc === "function" ? gc : null') as V8Gc | null;
    return gc ? () => gc({ type: 'minor' }) : null;
  } catch {
    return null;
  }
}

/** Schedules one young-generation collection after the current I/O callbacks (see above); false when unavailable. */
export function collectYoungGenerationWhenIdle(): boolean {
  if (minorGc === undefined) minorGc = loadMinorGc();
  if (!minorGc) return false;
  setImmediate(minorGc);
  return true;
}
