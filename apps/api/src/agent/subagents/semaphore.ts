/**
 * A counting semaphore for the children of one parent run (openspec subagents "Requirement: Parallel children"): at
 * most `limit` hold a slot; the others wait in order. A waiter whose signal aborts stops waiting (and takes no slot).
 */
import { ToolExecutionCancelledError } from '../tool-registry';

export class Semaphore {
  private held = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  /** Resolves with the release function once a slot is free; rejects with ToolExecutionCancelledError on abort. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(new ToolExecutionCancelledError());
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.held++;
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new ToolExecutionCancelledError());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** children holding a slot now */
  get running(): number {
    return this.held;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      this.waiting.shift()?.grant();
    };
  }
}
