/**
 * The scheduler's idle cost (openspec automations "Requirement: One timer"): a thousand enabled automations loaded from
 * a real store, none due within the window, and the event loop's active time (`performance.eventLoopUtilization`)
 * over a real idle window, per minute, next to the same window without automations. Also: the timers alive, the
 * wake-ups of a simulated idle hour on a test clock, the start (load + plan of 1,000) and one due time handled.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AutomationRun } from '@cashcode/contracts';
import type { AutomationRunner } from '../apps/api/src/automations/automation-runner';
import { AutomationScheduler, REAL_CLOCK, type AutomationClock } from '../apps/api/src/automations/automation-scheduler';
import { AutomationStore } from '../apps/api/src/automations/automation-store';
import { AutomationsService } from '../apps/api/src/automations/automations.service';
import type { Figure } from './server-bench';

const AUTOMATIONS = 1000;
const TARGET_MS_PER_MINUTE = 1;

/** A clock that counts wake-ups and timers; `real` underneath. */
class CountingClock implements AutomationClock {
  wakeUps = 0;
  alive = 0;
  now = (): number => REAL_CLOCK.now();
  setTimer(callback: () => void, ms: number): unknown {
    this.alive++;
    return REAL_CLOCK.setTimer(() => {
      this.alive--;
      this.wakeUps++;
      callback();
    }, ms);
  }
  clearTimer(handle: unknown): void {
    this.alive--;
    REAL_CLOCK.clearTimer(handle);
  }
}

function storedAutomations(now: number): unknown[] {
  const at = new Date(now).toISOString();
  return Array.from({ length: AUTOMATIONS }, (_, index) => {
    const schedule =
      index % 3 === 0
        ? { kind: 'cron', expression: `${index % 60} ${index % 24} * * *`, timezone: 'Europe/Berlin' }
        : index % 3 === 1
          ? { kind: 'interval', every_seconds: 3_600 * (1 + (index % 48)) }
          : { kind: 'once', at: new Date(now + 86_400_000 * (1 + (index % 300))).toISOString() };
    return {
      id: `a${index.toString(16).padStart(16, '0')}`,
      name: `Automation ${index}`,
      prompt: 'Summarise the news.',
      schedule,
      enabled: true,
      llm: null,
      tools: null,
      mcp_servers: null,
      skills: null,
      approvals: 'deny',
      budget: null,
      max_run_seconds: 600,
      chat_mode: 'single',
      missed: 'run_once',
      delivery: null,
      source: 'owner',
      created_at: at,
      updated_at: at,
      anchor_at: at,
      // at least two hours ahead: nothing is due within the window
      next_run_at: new Date(now + 7_200_000 + index * 60_000).toISOString(),
    };
  });
}

/**
 * Active event-loop milliseconds over an idle real window, the least of `rounds` windows (after a pause and a
 * collection each: start-up garbage and a busy shared machine are not the scheduler's idle cost).
 */
async function idleActiveMs(windowMs: number, rounds = 3): Promise<number> {
  let least = Infinity;
  for (let round = 0; round < rounds; round++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    (globalThis as { gc?: () => void }).gc?.();
    const start = performance.eventLoopUtilization();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    least = Math.min(least, performance.eventLoopUtilization(start).active);
  }
  return least;
}

export async function runAutomationsBench(log: (line: string) => void): Promise<Figure[]> {
  const windowMs = Number(process.env['CASHCODE_BENCH_AUTOMATIONS_WINDOW_SEC'] ?? 15) * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'cashcode-automations-bench-'));
  const figures: Figure[] = [];
  try {
    mkdirSync(join(dir, 'automations'), { recursive: true });
    writeFileSync(join(dir, 'automations', 'automations.json'), JSON.stringify({ version: 1, automations: storedAutomations(Date.now()) }));
    const clock = new CountingClock();
    let runs = 0;
    const runner = {
      start: () => {
        runs++;
        const run = {} as AutomationRun;
        return { started: Promise.resolve(run), ended: Promise.resolve(run) };
      },
      recordSkipped: () => Promise.resolve({} as AutomationRun),
    } as unknown as AutomationRunner;
    const service = new AutomationsService({
      store: new AutomationStore(dir),
      scheduler: (onDue) => new AutomationScheduler(clock, onDue),
      runner,
      catalog: { toolNames: () => [], mcpServerNames: () => [], skillExists: () => Promise.resolve(true) },
      now: () => clock.now(),
      minIntervalSec: 60,
    });
    const startedAt = performance.now();
    await service.start();
    const startMs = performance.now() - startedAt;
    const wakeUpsBefore = clock.wakeUps;
    const active = await idleActiveMs(windowMs);
    const wakeUpsDuring = clock.wakeUps - wakeUpsBefore;
    const alive = clock.alive;
    service.stop();
    // the same process and heap without the scheduler: what an idle Node.js costs by itself (the window's own timer)
    const baseline = await idleActiveMs(windowMs);
    const perMinute = (ms: number) => (ms * 60_000) / windowMs;
    const added = Math.max(0, perMinute(active) - perMinute(baseline));
    log(`idle ${windowMs / 1000} s (least of 3): ${active.toFixed(3)} ms active with ${service.scheduler.size} automations, ${baseline.toFixed(3)} ms without`);
    figures.push(
      { name: `event-loop time per idle minute added by ${AUTOMATIONS} enabled automations`, value: added, unit: 'ms', target: `≤ ${TARGET_MS_PER_MINUTE} ms`, pass: added <= TARGET_MS_PER_MINUTE },
      { name: `event-loop time per idle minute with ${AUTOMATIONS} automations (whole process)`, value: perMinute(active), unit: 'ms' },
      { name: 'event-loop time per idle minute without automations (same process)', value: perMinute(baseline), unit: 'ms' },
      { name: `timers alive for ${AUTOMATIONS} automations`, value: alive, unit: 'timers', target: '1', pass: alive === 1 },
      { name: 'scheduler wake-ups during the idle window', value: wakeUpsDuring, unit: 'wake-ups', target: '0', pass: wakeUpsDuring === 0 },
      { name: `start: load and plan ${AUTOMATIONS} automations`, value: startMs, unit: 'ms' },
    );

    // one due time handled among a thousand scheduled (the heap pop, the next due time, the re-arm)
    const heapClock = { now: () => 0, setTimer: () => 1, clearTimer: () => undefined };
    const scheduler = new AutomationScheduler(heapClock, () => undefined);
    for (let index = 0; index < AUTOMATIONS; index++) scheduler.set(`a${index}`, 1_000 + ((index * 7919) % AUTOMATIONS));
    const rounds = 10_000;
    const t0 = performance.now();
    for (let round = 0; round < rounds; round++) scheduler.set(`a${round % AUTOMATIONS}`, 2_000 + round);
    figures.push({ name: `reschedule one of ${AUTOMATIONS} automations`, value: ((performance.now() - t0) * 1000) / rounds, unit: 'µs' });
    if (runs > 0) log(`warning: ${runs} run(s) started during the bench`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
