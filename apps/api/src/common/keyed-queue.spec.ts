import { KeyedQueue, SerialQueue } from './keyed-queue';

/** A promise with its resolve/reject exposed. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe(KeyedQueue.name, () => {
  it('runs the tasks of one key one at a time, in the order they were queued', async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    const gate = deferred();
    const first = queue.run('a', async () => {
      order.push('first:start');
      await gate.promise;
      order.push('first:end');
      return 1;
    });
    const second = queue.run('a', () => {
      order.push('second');
      return 2;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['first:start']);
    gate.resolve();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(order).toEqual(['first:start', 'first:end', 'second']);
  });

  it('runs the tasks of different keys concurrently', async () => {
    const queue = new KeyedQueue();
    const gate = deferred();
    const blocked = queue.run('a', () => gate.promise);
    expect(await queue.run('b', () => 'b ran')).toBe('b ran');
    gate.resolve();
    await blocked;
  });

  it('a failed task rejects its own caller only; the next task of the key still runs', async () => {
    const queue = new KeyedQueue();
    const failing = queue.run('a', () => Promise.reject(new Error('boom')));
    const next = queue.run('a', () => 'next');
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
  });

  it('a task that throws synchronously rejects its caller like an async failure', async () => {
    const queue = new KeyedQueue();
    const failing = queue.run('a', () => {
      throw new Error('sync boom');
    });
    await expect(failing).rejects.toThrow('sync boom');
    expect(await queue.run('a', () => 'after')).toBe('after');
  });

  it('reports busy keys until their tasks settled, then forgets them', async () => {
    const queue = new KeyedQueue();
    const gate = deferred();
    const task = queue.run('a', () => gate.promise);
    expect(queue.isBusy('a')).toBe(true);
    expect(queue.isBusy('b')).toBe(false);
    expect(queue.busyKeys()).toEqual(['a']);
    gate.resolve();
    await task;
    await queue.settled();
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.isBusy('a')).toBe(false);
    expect(queue.busyKeys()).toEqual([]);
  });

  it('settled waits for the tasks queued so far, of one key or of all, and never rejects', async () => {
    const queue = new KeyedQueue();
    const gateA = deferred();
    const gateB = deferred();
    const done: string[] = [];
    void queue.run('a', () => gateA.promise.then(() => done.push('a'))).catch(() => undefined);
    void queue.run('b', () => gateB.promise.then(() => done.push('b')));
    const settledA = queue.settled('a').then(() => done.push('settled a'));
    const settledAll = queue.settled().then(() => done.push('settled all'));
    gateA.reject(new Error('a failed'));
    await settledA;
    expect(done).toEqual(['settled a']);
    gateB.resolve();
    await settledAll;
    expect(done).toEqual(['settled a', 'b', 'settled all']);
    await expect(queue.settled('unknown')).resolves.toBeUndefined();
  });

  it('a SerialQueue runs its tasks one after another; a failure rejects only its caller', async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    const done: string[] = [];
    const first = queue.run(() => gate.promise.then(() => done.push('first')));
    const failing = queue.run(async () => {
      done.push('failing');
      throw new Error('boom');
    });
    const third = queue.run(() => done.push('third'));
    expect(done).toEqual([]);
    gate.resolve();
    await first;
    await expect(failing).rejects.toThrow('boom');
    await third;
    expect(done).toEqual(['first', 'failing', 'third']);
    await expect(queue.settled()).resolves.toBeUndefined();
  });
});
