import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { ServerEvent } from '@cashcode/contracts';
import { Subject } from 'rxjs';

import { apiErrorInterceptor } from '../core/api/api-error.interceptor';
import { ChatSocket } from '../core/socket/chat-socket';
import { automation, run } from './automation-testing';
import { AutomationsStore, PREVIEW_DEBOUNCE_MS, mergeRun } from './automations-store';

describe('AutomationsStore', () => {
  let store: AutomationsStore;
  let http: HttpTestingController;
  const events = new Subject<ServerEvent>();
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiErrorInterceptor])),
        provideHttpClientTesting(),
        { provide: ChatSocket, useValue: { events: events.asObservable() } },
        AutomationsStore,
      ],
    });
    store = TestBed.inject(AutomationsStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  async function load(list = [automation()]): Promise<void> {
    const loading = store.load();
    http.expectOne('/api/automations').flush({ automations: list });
    await loading;
  }

  function flushChoices(): void {
    http.expectOne('/api/settings/llm/models').flush({ models: [{ provider: 'openai_compatible', id: 'gpt-x' }], providers: {} });
    http.expectOne('/api/settings/tool-policies').flush({ defaults: {}, tools: {}, servers: {}, rules: [], known_tools: [{ name: 'web_fetch' }, { name: 'read_file' }] });
    http.expectOne('/api/channels/telegram/pairings').flush({
      pending: [],
      senders: [{ sender_id: '4242', display_name: 'Ada', username: 'ada', approved_at: '2026-12-01T08:00:00+00:00', kind: 'user' }],
    });
  }

  it('Scenario: the schedule preview follows the editor, debounced, and shows the server error at the schedule', async () => {
    store.openNew();
    await settle();
    flushChoices();
    const first = http.expectOne('/api/automations/preview');
    expect(first.request.body).toEqual({ schedule: expect.objectContaining({ kind: 'cron', expression: '0 8 * * 1-5' }) });
    first.flush({ description: 'At 08:00, Monday through Friday (UTC)', next: ['2026-12-07T08:00:00Z'] });
    await settle();
    expect(store.preview()?.description).toContain('Monday through Friday');
    expect(store.tools()).toEqual(['read_file', 'web_fetch']);
    expect(store.senders().map((sender) => sender.sender_id)).toEqual(['4242']);

    // keystrokes in a row: one request, for the last text
    store.edit({ cronExpression: '0 9' });
    store.edit({ cronExpression: '0 99 * * *' });
    await wait(PREVIEW_DEBOUNCE_MS + 50);
    const refused = http.expectOne('/api/automations/preview');
    expect(refused.request.body.schedule.expression).toBe('0 99 * * *');
    refused.flush(
      { type: 'urn:cashcode:problem:validation-error', status: 422, code: 'invalid_schedule', detail: 'The schedule is invalid.', errors: [{ field: 'schedule.expression', message: 'not a valid cron expression: hour out of range' }] },
      { status: 422, statusText: 'Unprocessable Entity' },
    );
    await settle();
    expect(store.preview()).toBeNull();
    expect(store.previewError()).toBe('not a valid cron expression: hour out of range');

    // an incomplete schedule asks nothing
    store.edit({ scheduleKind: 'interval', intervalValue: '' });
    await wait(PREVIEW_DEBOUNCE_MS + 50);
    http.expectNone('/api/automations/preview');
    expect(store.previewError()).toBeNull();
  });

  it('Scenario: a refused save keeps the editor open with the error at the field', async () => {
    await load([]);
    store.openNew();
    await settle();
    flushChoices();
    http.expectOne('/api/automations/preview').flush({ description: 'd', next: [] });
    expect(await store.save()).toBe(false);
    expect(store.fieldErrors().name).toEqual({ key: 'automations.error.required' });

    store.edit({ name: 'Brief', prompt: 'Summarise', budgetTokens: '100' });
    const saving = store.save();
    const post = http.expectOne({ method: 'POST', url: '/api/automations' });
    expect(post.request.body).toMatchObject({ name: 'Brief', budget: { tokens: 100 } });
    post.flush(
      { status: 422, code: 'invalid_budget', detail: 'The budget is invalid.', errors: [{ field: 'budget.tokens', message: 'must be at least 1,000 tokens' }] },
      { status: 422, statusText: 'Unprocessable Entity' },
    );
    expect(await saving).toBe(false);
    expect(store.editor()).not.toBeNull();
    expect(store.fieldErrors().budget).toEqual({ text: 'must be at least 1,000 tokens' });
    // editing the field clears its error
    store.edit({ budgetTokens: '2000' });
    expect(store.fieldErrors().budget).toBeUndefined();
    await wait(0);

    const again = store.save();
    http.expectOne({ method: 'POST', url: '/api/automations' }).flush(automation({ id: 'a2', name: 'Brief' }));
    expect(await again).toBe(true);
    expect(store.editor()).toBeNull();
    expect(store.automations().map((a) => a.name)).toEqual(['Brief']);
  });

  it('Scenario: pause, run now and a run already going are row actions with their own errors', async () => {
    await load();
    const pausing = store.setEnabled(store.automations()[0]!, false);
    const put = http.expectOne({ method: 'PUT', url: '/api/automations/a1' });
    expect(put.request.body).toMatchObject({ enabled: false, name: 'Morning brief', schedule: { kind: 'cron' } });
    expect(put.request.body).not.toHaveProperty('id');
    put.flush(automation({ enabled: false, next_run_at: null }));
    await pausing;
    expect(store.automations()[0]?.enabled).toBe(false);

    const running = store.runNow(store.automations()[0]!);
    http.expectOne({ method: 'POST', url: '/api/automations/a1/run' }).flush({ run: run({ outcome: 'running', ended_at: null }) });
    expect(await running).toBe(true);
    expect(store.automations()[0]?.running).toBe(true);

    const refused = store.runNow(store.automations()[0]!);
    http
      .expectOne({ method: 'POST', url: '/api/automations/a1/run' })
      .flush({ status: 409, code: 'automation_running', detail: 'A run of this automation is going.' }, { status: 409, statusText: 'Conflict' });
    expect(await refused).toBe(false);
    expect(store.rowErrors()['a1']).toBe('This automation is running already; wait for the run to end.');
  });

  it('Scenario: the run history pages back and follows automation_run events', async () => {
    await load();
    const opening = store.toggleHistory('a1');
    const first = http.expectOne((r) => r.url === '/api/automations/a1/runs');
    expect(first.request.params.get('limit')).toBe('10');
    expect(first.request.params.has('before')).toBe(false);
    first.flush({ runs: [run({ id: 'r3' }), run({ id: 'r2' })], next_before: 'cursor-2' });
    await opening;
    expect(store.hasMoreRuns()).toBe(true);

    const more = store.moreRuns();
    const second = http.expectOne((r) => r.url === '/api/automations/a1/runs');
    expect(second.request.params.get('before')).toBe('cursor-2');
    second.flush({ runs: [run({ id: 'r1' })], next_before: null });
    await more;
    expect(store.runs().map((r) => r.id)).toEqual(['r3', 'r2', 'r1']);
    expect(store.hasMoreRuns()).toBe(false);

    // a run starts, then ends: the row and the history follow; the end reloads the list (next due time)
    events.next({ event: 'automation_run', type: 'automation_run', run: run({ id: 'r4', outcome: 'running', ended_at: null }), automation_name: 'Morning brief' } as never);
    expect(store.automations()[0]?.running).toBe(true);
    expect(store.runs()[0]).toMatchObject({ id: 'r4', outcome: 'running' });
    events.next({ event: 'automation_run', type: 'automation_run', run: run({ id: 'r4', outcome: 'runaway_stopped', error: 'stopped' }), automation_name: 'Morning brief' } as never);
    expect(store.runs().map((r) => r.id)).toEqual(['r4', 'r3', 'r2', 'r1']);
    expect(store.automations()[0]?.last_run?.outcome).toBe('runaway_stopped');
    http.expectOne('/api/automations').flush({ automations: [automation({ last_run: run({ id: 'r4', outcome: 'runaway_stopped' }) })] });
    await settle();
  });

  it('merges a run into a list newest first', () => {
    expect(mergeRun([run({ id: 'b' })], run({ id: 'a' })).map((r) => r.id)).toEqual(['a', 'b']);
    expect(mergeRun([run({ id: 'a', outcome: 'running' })], run({ id: 'a' }))[0]?.outcome).toBe('ok');
  });
});
