/**
 * Automations across restarts (openspec automations "Requirement: Schedules survive restarts"): a run cut by a stop is
 * closed as cancelled, a due time missed while the server was down runs once (or is skipped, per automation), and a
 * thousand stored automations are loaded into one timer.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Automation } from '@cashcode/contracts';
import { AutomationsService } from '../src/automations/automations.service';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel } from './support/ws-client';
import { api, automationBody, waitForRuns } from './support/automations';

const ENV = { CASHCODE_AUTOMATION_MIN_INTERVAL_SEC: '1' };

describe('Automations across restarts (e2e)', () => {
  let fake: FakeModelServer;
  let dataDir: string;
  let configDir: string;
  let t: TestApp | null = null;

  beforeEach(async () => {
    fake = await FakeModelServer.start();
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-auto-data-'));
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-auto-config-'));
  });
  afterEach(async () => {
    await t?.close();
    t = null;
    await fake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(configDir, { recursive: true, force: true });
  });

  it('Scenario: a restart during a run and across due times runs the missed run once', async () => {
    t = await startTestApp({ dataDir, configDir, env: ENV });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    fake.enqueue({ hang: true });
    const every = (await api(t.httpUrl, 'POST', '/api/automations', automationBody({ name: 'Every 2 s', schedule: { kind: 'interval', every_seconds: 2 } }))).json as Automation;
    await fake.waitForRequests(1);
    const skipping = (await api(t.httpUrl, 'POST', '/api/automations', automationBody({ name: 'Skip when missed', missed: 'skip', schedule: { kind: 'once', at: new Date(Date.now() + 1500).toISOString() } })))
      .json as Automation;
    await t.close();
    t = null;
    // down across several due times of the first automation and the one due time of the second
    await new Promise((resolve) => setTimeout(resolve, 4500));

    fake.reset();
    fake.enqueue({ content: 'caught up', delayMs: 1500 });
    t = await startTestApp({ dataDir, configDir, env: ENV });
    const runs = await waitForRuns(t.httpUrl, every.id, (list) => list.some((run) => run.trigger === 'missed' && run.outcome !== 'running'));
    await api(t.httpUrl, 'PUT', `/api/automations/${every.id}`, automationBody({ name: 'Every 2 s', schedule: { kind: 'interval', every_seconds: 2 }, enabled: false }));
    const missed = runs.filter((run) => run.trigger === 'missed');
    expect(missed.map((run) => run.outcome)).toEqual(['ok']);
    // while the missed run went on, due times of the interval were skipped, never queued
    expect(runs.filter((run) => run.trigger === 'schedule' && run.outcome !== 'skipped').map((run) => run.outcome)).toEqual(['cancelled']);
    expect(runs.find((run) => run.outcome === 'cancelled')?.error).toMatch(/stopped/);

    const skipped = await waitForRuns(t.httpUrl, skipping.id, (list) => list.length > 0);
    expect(skipped.map((run) => [run.outcome, run.trigger])).toEqual([['skipped', 'missed']]);
    expect(fake.completions).toHaveLength(1);
  });

  it('Scenario: a thousand automations share one timer', async () => {
    const now = Date.now();
    const automations = Array.from({ length: 1000 }, (_, index) => {
      const at = new Date(now).toISOString();
      return {
        ...automationBody({ name: `Automation ${index}`, schedule: { kind: 'interval', every_seconds: 3600 + index } }),
        id: `a${index.toString(16).padStart(16, '0')}`,
        source: 'owner',
        created_at: at,
        updated_at: at,
        anchor_at: at,
        next_run_at: new Date(now + 3_600_000 + ((index * 7919) % 1000) * 1000).toISOString(),
      };
    });
    await fs.mkdir(join(dataDir, 'automations'), { recursive: true });
    await fs.writeFile(join(dataDir, 'automations', 'automations.json'), JSON.stringify({ version: 1, automations }));
    t = await startTestApp({ dataDir, configDir, env: ENV });
    const service = t.app.get(AutomationsService);
    expect(service.scheduler.size).toBe(1000);
    expect(service.scheduler.activeTimers).toBe(1);
    const listed = (await api(t.httpUrl, 'GET', '/api/automations')).json.automations as Automation[];
    expect(listed).toHaveLength(1000);
    expect(new Set(listed.map((entry) => entry.next_run_at)).size).toBe(1000);
  });
});
