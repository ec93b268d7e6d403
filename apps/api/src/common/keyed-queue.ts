/**
 * KeyedQueue: one serial queue per key. Tasks queued under the same key run one at a time in the order they were
 * queued; tasks of different keys run concurrently. A task that fails rejects only its own caller: the next task of
 * the key runs all the same. A key with nothing queued any more costs no memory.
 *
 * This is the per-key lock of the API (one writer per chat file, one per memory document, …): code that must not
 * interleave two operations on the same thing queues them here instead of chaining promises by hand.
 */
export class KeyedQueue<K = string> {
  /** the last queued task of each busy key, settled (never rejects) */
  private readonly tails = new Map<K, Promise<void>>();

  /** Runs `task` after every task queued earlier under `key` has settled (resolved or rejected). */
  run<T>(key: K, task: () => Promise<T> | T): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Whether `key` has a task queued or running. */
  isBusy(key: K): boolean {
    return this.tails.has(key);
  }

  /** The keys that have a task queued or running. */
  busyKeys(): K[] {
    return [...this.tails.keys()];
  }

  /**
   * Resolves once every task queued so far (under `key`, or under every key) has settled. Tasks queued meanwhile are
   * not waited for: call again while `isBusy` says so.
   */
  async settled(key?: K): Promise<void> {
    if (key !== undefined) await (this.tails.get(key) ?? Promise.resolve());
    else await Promise.all(this.tails.values());
  }
}

/** One serial queue (a KeyedQueue of a single key): one writer of a file, tasks in order, a failure rejects only its caller. */
export class SerialQueue {
  private readonly queue = new KeyedQueue<0>();

  /** Runs `task` after every task queued earlier has settled (resolved or rejected). */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    return this.queue.run(0, task);
  }

  /** Resolves once every task queued so far has settled. */
  settled(): Promise<void> {
    return this.queue.settled(0);
  }
}
