/**
 * Automations end to end (openspec automations): the real app with the fake model, schedules of a few seconds
 * (CASHCODE_AUTOMATION_MIN_INTERVAL_SEC=1, `once` a second ahead), runs as turns of the automation's chat, no overlap,
 * budgets, headless approvals, the tool subset, `schedule_task` and bad input.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Automation, AutomationRun, ServerEvent } from '@cashcode/contracts';
import { ToolRegistry } from '../src/agent/tool-registry';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { api, automationBody, waitForRuns } from './support/automations';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null }>;
}
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;

const ended = (runs: AutomationRun[]) => runs.filter((run) => run.outcome !== 'running');

describe('Automations (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_AUTOMATION_MIN_INTERVAL_SEC: '1' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  async function create(overrides: Record<string, unknown>): Promise<Automation> {
    const created = await api(t.httpUrl, 'POST', '/api/automations', automationBody(overrides));
    expect(created.status).toBe(201);
    return created.json as Automation;
  }

  it('Scenario: bad input is refused with a clear problem', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ schedule: { kind: 'cron', expression: '61 * * * *', timezone: 'UTC' } }, 'invalid_schedule', 'schedule.expression'],
      [{ schedule: { kind: 'cron', expression: '0 0 31 2 *', timezone: 'UTC' } }, 'invalid_schedule', 'schedule.expression'],
      [{ schedule: { kind: 'cron', expression: '0 8 * * *', timezone: 'Mars/Olympus' } }, 'invalid_timezone', 'schedule.timezone'],
      [{ schedule: { kind: 'once', at: '2026-02-30T08:00:00+01:00' } }, 'invalid_schedule', 'schedule.at'],
      [{ schedule: { kind: 'interval', every_seconds: 0 } }, 'invalid_schedule', 'schedule.every_seconds'],
      [{ schedule: { kind: 'once', at: '2020-01-01T08:00:00Z' } }, 'invalid_schedule', 'schedule.at'],
      [{ budget: { tokens: 0 } }, 'invalid_budget', 'budget.tokens'],
      [{ budget: { usd: -1 } }, 'invalid_budget', 'budget.usd'],
      [{ tools: ['no_such_tool'] }, 'unknown_tool', 'tools'],
      [{ mcp_servers: ['no-such-server'] }, 'unknown_mcp_server', 'mcp_servers'],
      [{ skills: ['no-such-skill'] }, 'unknown_skill', 'skills'],
      [{ name: '' }, 'invalid_automation', 'name'],
    ];
    for (const [overrides, code, field] of cases) {
      const answer = await api(t.httpUrl, 'POST', '/api/automations', automationBody(overrides));
      expect([answer.status, answer.json.code, answer.json.errors?.[0]?.field]).toEqual([422, code, field]);
      expect(answer.type).toContain('application/problem+json');
    }
    expect((await api(t.httpUrl, 'GET', '/api/automations')).json.automations).toEqual([]);
    const missing = await api(t.httpUrl, 'GET', '/api/automations/a0123456789abcdef');
    expect([missing.status, missing.json.code]).toEqual([404, 'not_found']);
  });

  it('Scenario: the preview says the schedule in words with its next five times', async () => {
    const cron = await api(t.httpUrl, 'POST', '/api/automations/preview', { schedule: { kind: 'cron', expression: '0 8 * * 1-5', timezone: 'Europe/Berlin' } });
    expect(cron.status).toBe(200);
    expect(cron.json.description).toBe('At 08:00, Monday through Friday (Europe/Berlin)');
    expect(cron.json.next).toHaveLength(5);
    for (const at of cron.json.next as string[]) expect(new Date(at).toLocaleString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' })).toBe('08:00');
    const interval = await api(t.httpUrl, 'POST', '/api/automations/preview', { schedule: { kind: 'interval', every_seconds: 7200 } });
    expect(interval.json.description).toBe('Every 2 hours');
    const bad = await api(t.httpUrl, 'POST', '/api/automations/preview', { schedule: { kind: 'cron', expression: '* * *', timezone: 'Nowhere/Else' } });
    expect([bad.status, bad.json.code]).toEqual([422, 'invalid_timezone']);
  });

  it('Scenario: a schedule fires and its run is a turn of the automation chat', async () => {
    fake.enqueue({ content: 'Hello from the automation.', usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 } });
    const automation = await create({ schedule: { kind: 'once', at: new Date(Date.now() + 1000).toISOString() } });
    expect(automation.next_run_at).not.toBeNull();
    const end = await client.next('automation_run', (event) => event.run.automation_id === automation.id && event.run.outcome !== 'running');
    expect(end).toMatchObject({ type: 'automation_run', automation_name: 'Test automation' });
    expect(end.run).toMatchObject({ outcome: 'ok', trigger: 'schedule', chat_id: `auto-${automation.id}`, tokens: 42, error: null });
    expect(bodyOf(fake.completions[0]).messages.at(-1)?.content).toContain('Say hello.');
    const history = await api(t.httpUrl, 'GET', `/api/sessions/auto-${automation.id}/messages`);
    expect(JSON.stringify(history.json)).toContain('Hello from the automation.');
    const after = (await api(t.httpUrl, 'GET', `/api/automations/${automation.id}`)).json as Automation;
    expect([after.next_run_at, after.running, after.last_run?.outcome]).toEqual([null, false, 'ok']);
  });

  it('Scenario: a due time while a run is going is recorded as skipped', async () => {
    fake.enqueue({ content: 'slow answer', delayMs: 3500 });
    const automation = await create({ schedule: { kind: 'interval', every_seconds: 1 } });
    const runs = await waitForRuns(t.httpUrl, automation.id, (list) => list.some((run) => run.outcome === 'skipped'));
    expect(runs.filter((run) => run.outcome === 'running')).toHaveLength(1);
    const now = await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    expect([now.status, now.json.code]).toEqual([409, 'automation_running']);
    await api(t.httpUrl, 'PUT', `/api/automations/${automation.id}`, automationBody({ schedule: { kind: 'interval', every_seconds: 1 }, enabled: false }));
    const final = await waitForRuns(t.httpUrl, automation.id, (list) => list.every((run) => run.outcome !== 'running'));
    expect(final.filter((run) => run.outcome === 'ok')).toHaveLength(1);
    expect(final.filter((run) => run.outcome === 'skipped').length).toBeGreaterThan(0);
    expect(fake.completions).toHaveLength(1);
  });

  it('Scenario: a run that crosses its budget ends as budget_exceeded', async () => {
    fake.enqueue({ toolCalls: [{ name: 'list_dir', arguments: '{}' }], usage: { prompt_tokens: 90_000, completion_tokens: 10_000, total_tokens: 100_000 } });
    fake.enqueue({ content: 'never asked' });
    const automation = await create({ budget: { tokens: 50_000 } });
    const started = await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    expect([started.status, started.json.run?.outcome, started.json.run?.trigger]).toEqual([202, 'running', 'manual']);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    expect(run).toMatchObject({ outcome: 'budget_exceeded', tokens: 100_000 });
    expect(run?.error).toContain('50,000 tokens');
    expect(fake.completions).toHaveLength(1);
  });

  it("Scenario: a child of an automation run spends only what remains of the run's budget", async () => {
    // the run's own call uses 10,000 of its 50,000 tokens; its child's first call 45,000 more: the child's next call
    // would cross what remains, and so would the run's
    fake.enqueue({
      toolCalls: [{ name: 'delegate', arguments: JSON.stringify({ task: 'dig', tools: ['list_dir'] }) }],
      usage: { prompt_tokens: 9_000, completion_tokens: 1_000, total_tokens: 10_000 },
    });
    fake.enqueue({ toolCalls: [{ name: 'list_dir', arguments: '{}' }], usage: { prompt_tokens: 44_000, completion_tokens: 1_000, total_tokens: 45_000 } });
    fake.enqueue({ content: 'never asked' });
    const automation = await create({ budget: { tokens: 50_000 } });
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    expect(run).toMatchObject({ outcome: 'budget_exceeded', tokens: 55_000 });
    expect(fake.completions).toHaveLength(2);
    const records = (await api(t.httpUrl, 'GET', `/api/usage/records?chat_id=${run?.chat_id}`)).json as unknown as {
      records: Array<{ purpose: string; outcome: string; error_code?: string }>;
    };
    expect(records.records.map((record) => [record.purpose, record.outcome, record.error_code ?? null])).toEqual([
      ['chat', 'refused', 'budget_exceeded'],
      ['subagent', 'refused', 'budget_exceeded'],
      ['subagent', 'ok', null],
      ['chat', 'ok', null],
    ]);
  });

  it('Scenario: a run priced in US dollars stops at its money budget and records its cost', async () => {
    const prices = { prices: [{ provider: 'openai_compatible', model: 'fake-model', input_per_million: 10, output_per_million: 10, currency: 'USD' }] };
    expect((await api(t.httpUrl, 'PUT', '/api/usage/prices', prices)).status).toBe(200);
    try {
      fake.enqueue({ toolCalls: [{ name: 'list_dir', arguments: '{}' }], usage: { prompt_tokens: 90_000, completion_tokens: 10_000, total_tokens: 100_000 } });
      const automation = await create({ budget: { usd: 0.5 } });
      await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
      const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
      expect(run).toMatchObject({ outcome: 'budget_exceeded', cost_usd: 1 });
      expect(run?.error).toContain('0.5 USD');
      expect(fake.completions).toHaveLength(1);
      const refused = (await api(t.httpUrl, 'GET', `/api/usage/records?chat_id=${run?.chat_id}`)).json as unknown as { records: Array<{ outcome: string; error_code?: string }> };
      expect(refused.records.map((record) => [record.outcome, record.error_code ?? null])).toEqual([
        ['refused', 'budget_exceeded'],
        ['ok', null],
      ]);
    } finally {
      await api(t.httpUrl, 'PUT', '/api/usage/prices', { prices: [] });
    }
  });

  it('Scenario: a run that denies approvals denies a call that needs approval at once', async () => {
    fake.enqueue({ toolCalls: [{ name: 'exec', arguments: '{"command":"echo hi"}' }] });
    fake.enqueue({ content: 'could not run it' });
    const automation = await create({ approvals: 'deny' });
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    expect(run?.outcome).toBe('ok');
    const toolMessage = bodyOf(fake.completions[1]).messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('needs approval');
  });

  it('Scenario: a run that waits for approvals gets the owner answer', async () => {
    fake.enqueue({ toolCalls: [{ id: 'wait-1', name: 'exec', arguments: '{"command":"echo hi"}' }] });
    fake.enqueue({ content: 'the owner said no' });
    const automation = await create({ approvals: 'wait' });
    const chatId = `auto-${automation.id}`;
    client.send({ type: 'attach', chat_id: chatId });
    const asked = client.next('approval_request', (event) => event.chat_id === chatId);
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    const request = await asked;
    expect(request.tool).toBe('exec');
    client.send({ type: 'approval', chat_id: chatId, call_id: request.call_id, decision: 'deny' });
    const resolved = await client.next('approval_resolved', (event) => event.chat_id === chatId);
    expect([resolved.decision, resolved.by]).toEqual(['deny', 'user']);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    expect(run?.outcome).toBe('ok');
  });

  it('Scenario: a run sees and runs only the tools of its subset', async () => {
    fake.enqueue({ toolCalls: [{ name: 'read_file', arguments: '{"path":"x.txt"}' }] });
    fake.enqueue({ content: 'done' });
    const automation = await create({ tools: ['list_dir'], mcp_servers: [], skills: [] });
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    const offered = (bodyOf(fake.completions[0]).tools ?? []).map((tool) => tool.function.name);
    expect(offered).toContain('list_dir');
    for (const name of ['read_file', 'exec', 'write_file', 'skill_load', 'mcp_prepare', 'schedule_task']) expect(offered).not.toContain(name);
    const toolMessage = bodyOf(fake.completions[1]).messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('not available in this run');
  });

  it('Scenario: a run longer than its maximum run time ends as timeout', async () => {
    fake.enqueue({ hang: true });
    const automation = await create({ max_run_seconds: 1 });
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
    expect(run?.outcome).toBe('timeout');
    expect(run?.error).toContain('maximum run time');
    expect(fake.completions[0]?.aborted).toBe(true);
  });

  it('Scenario: deleting an automation stops its run and removes its runs', async () => {
    fake.enqueue({ hang: true });
    const automation = await create({});
    await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
    await fake.waitForRequests(1);
    expect((await api(t.httpUrl, 'DELETE', `/api/automations/${automation.id}`)).status).toBe(204);
    await fake.waitForAbort(0);
    expect((await api(t.httpUrl, 'GET', `/api/automations/${automation.id}`)).status).toBe(404);
    expect((await api(t.httpUrl, 'GET', `/api/automations/${automation.id}/runs`)).status).toBe(404);
    const runsFile = join(t.dataDir, 'automations', 'runs', `${automation.id}.jsonl`);
    const until = Date.now() + 5_000;
    while (existsSync(runsFile) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(runsFile)).toBe(false);
  });

  it('Scenario: a tool that vanished after the automation was saved ends the run with a recorded error', async () => {
    const registry = t.app.get(ToolRegistry);
    const listDir = registry.get('list_dir');
    const automation = await create({ tools: ['list_dir'] });
    registry.unregister('list_dir');
    try {
      await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
      const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === 1);
      expect(run).toMatchObject({ outcome: 'error', error: 'The tool "list_dir" does not exist. Edit the automation\'s tools.' });
      expect(fake.completions).toHaveLength(0);
    } finally {
      if (listDir) registry.register(listDir);
    }
  });

  it('Scenario: a new chat per run', async () => {
    const automation = await create({ chat_mode: 'per_run' });
    for (let round = 1; round <= 2; round++) {
      await api(t.httpUrl, 'POST', `/api/automations/${automation.id}/run`);
      await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length === round);
    }
    const runs = (await api(t.httpUrl, 'GET', `/api/automations/${automation.id}/runs?limit=1`)).json;
    expect(runs.runs).toHaveLength(1);
    const older = (await api(t.httpUrl, 'GET', `/api/automations/${automation.id}/runs?limit=1&before=${runs.next_before}`)).json;
    expect(older.runs).toHaveLength(1);
    expect(older.next_before).toBeNull();
    const chats = [runs.runs?.[0]?.chat_id, older.runs?.[0]?.chat_id];
    expect(new Set(chats).size).toBe(2);
    for (const chat of chats) expect(chat).toMatch(new RegExp(`^auto-${automation.id}-[0-9a-z]{8}$`));
  });

  it('Scenario: the automations routes are in the OpenAPI document with their problems', async () => {
    const doc = (await api(t.httpUrl, 'GET', '/api/docs-json')).json as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(Object.keys(doc.paths['/api/automations'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/automations/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths['/api/automations/{id}/run']?.['post']?.responses ?? {}).sort()).toEqual(['202', '401', '403', '404', '409', '500']);
    expect(doc.paths['/api/automations/{id}/runs']?.['get']).toBeDefined();
    expect(doc.paths['/api/automations/preview']?.['post']?.responses['422']).toBeDefined();
  });

  describe('schedule_task', () => {
    async function propose(chatId: string, decision: 'allow_once' | 'deny'): Promise<ServerEvent & { event: 'approval_request' }> {
      const args = { name: 'Morning digest', prompt: 'Summarise my inbox.', schedule: { kind: 'cron', expression: '0 8 * * 1-5', timezone: 'UTC' }, tools: ['web_search'] };
      fake.enqueue({ toolCalls: [{ id: `p-${chatId}`, name: 'schedule_task', arguments: JSON.stringify(args) }] });
      fake.enqueue({ content: 'ok' });
      const asked = client.next('approval_request', (event) => event.chat_id === chatId);
      const done = client.next('done', (event) => event.chat_id === chatId);
      client.send({ type: 'attach', chat_id: chatId });
      client.sendMessage(chatId, 'Every weekday at 8, summarise my inbox.');
      const request = await asked;
      client.send({ type: 'approval', chat_id: chatId, call_id: request.call_id, decision });
      await done;
      return request;
    }

    it('Scenario: a proposed automation waits for the owner and is created when approved', async () => {
      const request = await propose('propose-yes', 'allow_once');
      expect(request.risk).toBe('schedule_task');
      expect(request.always_scope).toBeUndefined();
      expect(request.automation).toMatchObject({ name: 'Morning digest', prompt: 'Summarise my inbox.', tools: ['web_search'] });
      expect(request.automation?.schedule_description).toBe('At 08:00, Monday through Friday (UTC)');
      expect(request.automation?.next).toHaveLength(5);
      const list = (await api(t.httpUrl, 'GET', '/api/automations')).json.automations as Automation[];
      const created = list.find((entry) => entry.name === 'Morning digest');
      expect(created).toMatchObject({ source: 'agent', approvals: 'deny', tools: ['web_search'], enabled: true });
      await api(t.httpUrl, 'DELETE', `/api/automations/${created?.id}`);
    });

    it('Scenario: a proposed automation the owner denies is not created', async () => {
      await propose('propose-no', 'deny');
      const list = (await api(t.httpUrl, 'GET', '/api/automations')).json.automations as Automation[];
      expect(list.some((entry) => entry.name === 'Morning digest')).toBe(false);
    });
  });
});
