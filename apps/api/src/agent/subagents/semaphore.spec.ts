import { ToolExecutionCancelledError } from '../tool-registry';
import { Semaphore } from './semaphore';

describe('Semaphore', () => {
  it('lets `limit` holders in and the next waiter in order when one leaves', async () => {
    const slots = new Semaphore(2);
    const signal = new AbortController().signal;
    const a = await slots.acquire(signal);
    await slots.acquire(signal);
    const order: string[] = [];
    const c = slots.acquire(signal).then((release) => (order.push('c'), release));
    const d = slots.acquire(signal).then((release) => (order.push('d'), release));
    await Promise.resolve();
    expect(slots.running).toBe(2);
    a();
    a(); // a second release of the same slot changes nothing
    (await c)();
    await d;
    expect(order).toEqual(['c', 'd']);
    expect(slots.running).toBe(2);
  });

  it('a waiter whose signal aborts stops waiting and takes no slot', async () => {
    const slots = new Semaphore(1);
    const held = await slots.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(ToolExecutionCancelledError);
    held();
    expect(slots.running).toBe(0);
  });
});
