import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { DreamRun } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../core/api/api-error.interceptor';
import { MemoryStore } from './memory-store';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const HASH_C = 'c'.repeat(64);

function run(id: string, outcome: DreamRun['outcome'] = 'updated'): DreamRun {
  return {
    id,
    trigger: 'manual',
    started_at: '2026-07-26T10:00:00.000Z',
    finished_at: '2026-07-26T10:00:02.000Z',
    outcome,
    detail: null,
    model: { provider: 'openai_compatible', model: 'm1' },
    model_source: 'last_turn',
    records_read: 4,
    cursors: { c1: 4 },
    entries_before: 1,
    entries_after: 2,
    diff: '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,1 +1,2 @@\n - a\n+- b\n',
    revertible: outcome === 'updated',
  };
}

describe('MemoryStore (console)', () => {
  let store: MemoryStore;
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting(), MemoryStore],
    });
    store = TestBed.inject(MemoryStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  async function load(): Promise<void> {
    const loading = store.load();
    http.expectOne('/api/memory').flush({ content: '- a\n', hash: HASH_A });
    http.expectOne('/api/memory/soul').flush({ content: '', hash: HASH_B, uses_default: true, default_content: 'You are CashCode' });
    http.expectOne((r) => r.url === '/api/memory/dreams').flush({ runs: [run('1785052800000-00000001')] });
    await loading;
  }

  it('Scenario: loading fills both editors and the Dream history', async () => {
    await load();
    expect(store.memory().draft).toBe('- a\n');
    expect(store.soul().saved).toMatchObject({ uses_default: true });
    expect(store.runs()).toHaveLength(1);
    expect(store.isDirty('memory')).toBe(false);
  });

  it('Scenario: saving sends the hash it read and stores the new version', async () => {
    await load();
    store.edit('memory', '- a\n- b\n');
    expect(store.isDirty('memory')).toBe(true);
    const saving = store.save('memory');
    const put = http.expectOne('/api/memory');
    expect(put.request.method).toBe('PUT');
    expect(put.request.body).toEqual({ content: '- a\n- b\n', hash: HASH_A });
    put.flush({ content: '- a\n- b\n', hash: HASH_C });
    await saving;
    expect(store.memory()).toMatchObject({ justSaved: true, conflict: false, saved: { hash: HASH_C } });
    expect(store.isDirty('memory')).toBe(false);
  });

  it('Scenario: a 409 marks a conflict and keeps the draft; overwrite re-reads the hash and saves the draft', async () => {
    await load();
    store.edit('memory', 'mine\n');
    const saving = store.save('memory');
    http
      .expectOne('/api/memory')
      .flush({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'changed', code: 'memory_conflict' }, { status: 409, statusText: 'Conflict' });
    await saving;
    expect(store.memory()).toMatchObject({ conflict: true, draft: 'mine\n' });

    const overwriting = store.overwrite('memory');
    http.expectOne({ method: 'GET', url: '/api/memory' }).flush({ content: 'theirs\n', hash: HASH_C });
    await settle();
    const put = http.expectOne({ method: 'PUT', url: '/api/memory' });
    expect(put.request.body).toEqual({ content: 'mine\n', hash: HASH_C });
    put.flush({ content: 'mine\n', hash: HASH_B });
    await overwriting;
    expect(store.memory()).toMatchObject({ conflict: false, draft: 'mine\n', saved: { hash: HASH_B } });
  });

  it('Scenario: on a conflict, loading the new version drops the draft', async () => {
    await load();
    store.edit('soul', 'You are Jeeves');
    const saving = store.save('soul');
    http.expectOne('/api/memory/soul').flush({ detail: 'changed' }, { status: 409, statusText: 'Conflict' });
    await saving;
    const reloading = store.reload('soul');
    http.expectOne('/api/memory/soul').flush({ content: 'You are Alfred', hash: HASH_C, uses_default: false, default_content: 'x' });
    await reloading;
    expect(store.soul()).toMatchObject({ conflict: false, draft: 'You are Alfred' });
    expect(store.isDirty('soul')).toBe(false);
  });

  it('Scenario: Run now reports the outcome and refreshes the history and MEMORY.md', async () => {
    await load();
    const running = store.runDream();
    expect(store.dreamAction()).toBe('running');
    http.expectOne({ method: 'POST', url: '/api/memory/dream' }).flush({ ran: true, reason: null, run: run('1785052800000-00000002') });
    await settle();
    http.expectOne((r) => r.url === '/api/memory/dreams').flush({ runs: [run('1785052800000-00000002'), run('1785052800000-00000001')] });
    http.expectOne('/api/memory').flush({ content: '- a\n- b\n', hash: HASH_C });
    await running;
    expect(store.dreamMessage()).toEqual({ kind: 'success', text: 'Dream finished: Updated.' });
    expect(store.runs()).toHaveLength(2);
    expect(store.memory().draft).toBe('- a\n- b\n');
    expect(store.dreamAction()).toBe('idle');
  });

  it('Scenario: Run now with nothing new says so; a 409 while another run is going on is shown as an error', async () => {
    await load();
    let running = store.runDream();
    http.expectOne('/api/memory/dream').flush({ ran: false, reason: 'no_new_records', run: null });
    await settle();
    http.expectOne((r) => r.url === '/api/memory/dreams').flush({ runs: [] });
    http.expectOne('/api/memory').flush({ content: '- a\n', hash: HASH_A });
    await running;
    expect(store.dreamMessage()).toEqual({ kind: 'info', text: 'Nothing new to distil since the last run.' });

    running = store.runDream();
    http.expectOne('/api/memory/dream').flush({ detail: 'a Dream run is already in progress' }, { status: 409, statusText: 'Conflict' });
    await running;
    expect(store.dreamMessage()).toEqual({ kind: 'error', text: 'Could not run Dream: a Dream run is already in progress' });
  });

  it('Scenario: revert keeps an open edit of MEMORY.md, so saving it later reports the conflict', async () => {
    await load();
    store.edit('memory', 'editing\n');
    const reverting = store.revert(run('1785052800000-00000001'));
    http.expectOne({ method: 'POST', url: '/api/memory/dreams/1785052800000-00000001/revert' }).flush(run('1785052800000-00000003', 'reverted'));
    await settle();
    http.expectOne((r) => r.url === '/api/memory/dreams').flush({ runs: [] });
    http.expectOne('/api/memory').flush({ content: '', hash: HASH_C });
    await reverting;
    expect(store.dreamMessage()).toEqual({ kind: 'success', text: 'MEMORY.md was restored.' });
    expect(store.memory()).toMatchObject({ draft: 'editing\n', saved: { hash: HASH_A } });
  });
});
