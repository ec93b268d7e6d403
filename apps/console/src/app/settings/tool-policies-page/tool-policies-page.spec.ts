import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import { By } from '@angular/platform-browser';
import type { ToolPoliciesResponse } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../../core/api/api-error.interceptor';
import { I18n } from '../../core/i18n/i18n';
import { PolicySelect } from './policy-select';
import { ToolPoliciesPage } from './tool-policies-page';

const PROBLEM = { 'Content-Type': 'application/problem+json' };

function policies(): ToolPoliciesResponse {
  return {
    defaults: { read: 'allow', write: 'ask', network: 'allow', exec: 'ask', mcp: 'ask', memory_write: 'ask', schedule_task: 'ask', browser_action: 'ask' },
    tools: {},
    servers: {},
    rules: [{ id: 'r1', scope: { kind: 'exec_program', program: 'git' }, created_at: new Date().toISOString() }],
    known_tools: [
      { name: 'read_file', risk: 'read', policy: 'allow', explicit: false },
      { name: 'exec', risk: 'exec', policy: 'ask', explicit: false },
      { name: 'github/create_issue', risk: 'mcp', policy: 'ask', explicit: false, server: 'github', title: 'Create an issue' },
    ],
  };
}

describe('ToolPoliciesPage', () => {
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    localStorage.clear();
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting()],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    http.verify();
    localStorage.clear();
  });

  async function render(rules?: ToolPoliciesResponse['rules']): Promise<{ fixture: ComponentFixture<ToolPoliciesPage>; element: HTMLElement }> {
    const fixture = TestBed.createComponent(ToolPoliciesPage);
    http.expectOne('/api/settings/tool-policies').flush({ ...policies(), ...(rules ? { rules } : {}) });
    http.expectOne((r) => r.url === '/api/approvals/audit').flush({
      entries: [
        {
          at: '2026-07-26T12:00:00+08:00',
          chat_id: 'c1',
          call_id: 'k1',
          tool: 'exec',
          risk: 'exec',
          decision: 'allow_always',
          by: 'user',
          preview: 'git status',
        },
      ],
      total: 1,
      offset: 0,
      limit: 20,
    });
    http.expectOne('/api/settings/exec-sandbox').flush({ mode: 'auto', active: false, kind: null, network: true, reason: 'bwrap is not installed' });
    http.expectOne('/api/health').flush({
      status: 'ok',
      service: 'cashcode',
      browser: { enabled: true, executable: '/usr/bin/chromium', sandboxed: false, allow_private: false },
    });
    await settle();
    await fixture.whenStable();
    return { fixture, element: fixture.nativeElement as HTMLElement };
  }

  const all = (element: HTMLElement, id: string) => [...element.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];

  it('Scenario: the Tools & approvals page shows the sandbox, the defaults, the tools by risk and server, the rules and the log', async () => {
    const { element } = await render();
    expect(element.querySelector('h1')?.textContent).toBe('Tools & approvals');
    const sandbox = element.querySelector('[data-testid="tools-sandbox-state"]')!;
    expect(sandbox.textContent).toContain('UNCONFINED');
    expect(element.querySelector('[data-testid="tools-sandbox"]')?.textContent).toContain('bwrap is not installed');
    expect(element.querySelector('[data-testid="tools-browser-state"]')?.textContent).toContain('headless browser (/usr/bin/chromium). It runs without the sandbox');
    expect(all(element, 'tools-default-row').map((row) => row.getAttribute('data-risk'))).toEqual(['read', 'write', 'network', 'exec', 'mcp', 'memory_write', 'schedule_task', 'browser_action']);
    expect(all(element, 'tools-tool-row').map((row) => row.getAttribute('data-tool'))).toEqual(['read_file', 'exec', 'github/create_issue']);
    expect(element.querySelector('[data-testid="tools-server"]')?.textContent).toContain('Create an issue');
    const rule = element.querySelector('[data-testid="tools-rule-row"]')!;
    expect(rule.querySelector('[data-testid="tools-rule-scope"]')?.textContent).toBe('exec of the program git');
    expect(rule.textContent).toContain('Created just now');
    expect(rule.querySelector('button')?.getAttribute('aria-label')).toBe('Revoke the rule for exec of the program git');
    const row = element.querySelector('[data-testid="tools-audit-row"]')!;
    expect(row.textContent).toContain('Always allowed');
    expect(row.textContent).toContain('git status');
    expect(element.querySelector('[data-testid="tools-audit-range"]')?.textContent).toBe('1–1 of 1');
    expect(element.querySelector<HTMLButtonElement>('[data-testid="tools-audit-next"]')?.disabled).toBe(true);
  });

  it('Scenario: a changed select saves the policy; a refusal is shown clearly', async () => {
    const { fixture, element } = await render();
    const selects = fixture.debugElement.queryAll(By.directive(PolicySelect));
    // defaults (8), then read_file, exec, the github server, github/create_issue
    const exec = selects[9].componentInstance as PolicySelect;
    expect(exec.label()).toBe('Policy for exec');
    exec.changed.emit('deny');
    const put = http.expectOne({ method: 'PUT', url: '/api/settings/tool-policies' });
    expect(put.request.body).toEqual({ tools: { exec: 'deny' } });
    put.flush({ detail: 'tools.exec: not allowed' }, { status: 400, statusText: 'Bad Request', headers: PROBLEM });
    await settle();
    await fixture.whenStable();
    expect(element.querySelector('[data-testid="tools-save-error"]')?.textContent).toContain('Could not save the change: tools.exec: not allowed');
    expect(element.querySelector('[data-testid="tools-save-error"] [role="alert"]')).not.toBeNull();
  });

  it('Scenario: Revoke removes a standing rule', async () => {
    const { fixture, element } = await render();
    element.querySelector<HTMLButtonElement>('[data-testid="tools-rule-revoke"]')!.click();
    http.expectOne({ method: 'DELETE', url: '/api/settings/tool-policies/rules/r1' }).flush(null, { status: 204, statusText: 'No Content' });
    await settle();
    await fixture.whenStable();
    expect(element.querySelector('[data-testid="tools-rule-row"]')).toBeNull();
    expect(element.querySelector('[data-testid="tools-rules-empty"]')?.textContent).toBe('No standing rules yet.');
  });

  it('Scenario: exact command rules are listed with their words; a rule that covers nothing any more is flagged', async () => {
    const reason = 'git can run other programs or code through its options, so a rule for it with any arguments covers nothing.';
    // one creation time for all three (rules are listed newest first; equal times keep the server's order)
    const createdAt = new Date().toISOString();
    const { element } = await render([
      { id: 'r1', scope: { kind: 'exec_program', program: 'git' }, created_at: createdAt, inactive_reason: reason },
      { id: 'r2', scope: { kind: 'exec_command', argv: ['git', 'commit', '-m', 'a b'] }, created_at: createdAt },
      { id: 'r3', scope: { kind: 'exec_program', program: 'ls' }, created_at: createdAt },
    ]);
    const rows = all(element, 'tools-rule-row');
    expect(rows.map((row) => row.querySelector('[data-testid="tools-rule-scope"]')?.textContent)).toEqual([
      'exec of the program git',
      "exec of exactly git commit -m 'a b'",
      'exec of the program ls',
    ]);
    const inactive = rows.map((row) => row.querySelector<HTMLElement>('[data-testid="tools-rule-inactive"]'));
    expect(inactive[0]?.textContent).toContain('Covers nothing');
    expect(inactive[0]?.getAttribute('title')).toBe(reason);
    expect(inactive.slice(1)).toEqual([null, null]);
  });

  it('reads in Simplified Chinese', async () => {
    TestBed.inject(I18n).setLanguage('zh-CN');
    const { element } = await render();
    expect(element.querySelector('h1')?.textContent).toBe('工具与审批');
    expect(element.querySelector('[data-testid="tools-rule-scope"]')?.textContent).toBe('执行程序 git');
  });
});
