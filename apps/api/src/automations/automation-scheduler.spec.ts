import { AutomationScheduler, type AutomationClock } from './automation-scheduler';

/** A clock the test moves; it counts the timers alive. */
class FakeClock implements AutomationClock {
  time = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;
  now(): number {
    return this.time;
  }
  setTimer(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }
  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  get alive(): number {
    return this.timers.size;
  }
  advance(ms: number): void {
    this.time += ms;
    for (const [id, timer] of [...this.timers]) {
      if (timer.at <= this.time) {
        this.timers.delete(id);
        timer.callback();
      }
    }
  }
}

describe('AutomationScheduler', () => {
  it('Scenario: a thousand automations are one timer', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    const scheduler = new AutomationScheduler(clock, (id) => fired.push(id));
    for (let index = 0; index < 1000; index++) scheduler.set(`a${index}`, 60_000 + ((index * 7919) % 1000) * 1000);
    expect([scheduler.size, clock.alive, scheduler.activeTimers]).toEqual([1000, 1, 1]);
    clock.advance(60_000);
    expect(fired).toEqual(['a0']);
    expect(clock.alive).toBe(1);
    clock.advance(10_000_000);
    expect(fired).toHaveLength(1000);
    expect([clock.alive, scheduler.size]).toEqual([0, 0]);
  });

  it('hands over due entries in time order and follows changes and removals', () => {
    const clock = new FakeClock();
    const fired: Array<[string, number]> = [];
    const scheduler = new AutomationScheduler(clock, (id, due) => fired.push([id, due]));
    scheduler.set('late', 300);
    scheduler.set('early', 100);
    scheduler.set('moved', 50);
    scheduler.set('moved', 200);
    scheduler.set('gone', 150);
    scheduler.remove('gone');
    clock.advance(1000);
    expect(fired).toEqual([
      ['early', 100],
      ['moved', 200],
      ['late', 300],
    ]);
    for (let round = 0; round < 1000; round++) scheduler.set('edited', 5_000 + round);
    expect(scheduler.heapSize).toBeLessThan(100);
    scheduler.set('x', 2000);
    scheduler.stop();
    expect(clock.alive).toBe(0);
  });
});
