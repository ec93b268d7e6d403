import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';

import { apiErrorInterceptor } from '../api/api-error.interceptor';
import { ExecSandbox } from './exec-sandbox';

const PROBLEM = { 'Content-Type': 'application/problem+json' };

describe('ExecSandbox', () => {
  let sandbox: ExecSandbox;
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    sandbox = TestBed.inject(ExecSandbox);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  it('reads the status once and shares it (concurrent loads make one request)', async () => {
    const first = sandbox.load();
    const second = sandbox.load();
    http.expectOne('/api/settings/exec-sandbox').flush({ mode: 'auto', active: true, kind: 'bwrap', network: false });
    await Promise.all([first, second]);
    expect(sandbox.status()).toEqual({ mode: 'auto', active: true, kind: 'bwrap', network: false });
    await sandbox.load();
    http.expectNone('/api/settings/exec-sandbox');
  });

  it('falls back to the health document, and says when the server reports no sandbox state at all', async () => {
    let loading = sandbox.load();
    http.expectOne('/api/settings/exec-sandbox').flush({ detail: 'Cannot GET' }, { status: 404, statusText: 'Not Found', headers: PROBLEM });
    await settle();
    http.expectOne('/api/health').flush({ status: 'ok', exec_sandbox: { mode: 'off', active: false, kind: null, network: true, reason: 'mode off' } });
    await loading;
    expect(sandbox.status()?.reason).toBe('mode off');
    expect(sandbox.unavailable()).toBe(false);

    loading = sandbox.load(true);
    http.expectOne('/api/settings/exec-sandbox').flush({ detail: 'Cannot GET' }, { status: 404, statusText: 'Not Found', headers: PROBLEM });
    await settle();
    http.expectOne('/api/health').flush({ status: 'ok' });
    await loading;
    expect(sandbox.unavailable()).toBe(true);
    expect(sandbox.error()).toBe('Cannot GET');
  });
});
