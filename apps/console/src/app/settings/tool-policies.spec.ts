import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { ToolPoliciesResponse } from '@cashcode/contracts';

import { apiErrorInterceptor } from '../core/api/api-error.interceptor';
import { AUDIT_PAGE_SIZE, ToolPoliciesStore } from './tool-policies-store';
import {
  builtinGroups,
  defaultPolicyChange,
  pageRange,
  serverGroups,
  serverPolicyChange,
  toolKey,
  toolPolicyChange,
} from './tool-policies-view';

const PROBLEM = { 'Content-Type': 'application/problem+json' };

function policiesFixture(): ToolPoliciesResponse {
  return {
    defaults: { read: 'allow', write: 'ask', network: 'allow', exec: 'ask', mcp: 'ask', memory_write: 'ask', schedule_task: 'ask', browser_action: 'ask' },
    tools: { write_file: 'allow', 'github/delete_repo': 'deny' },
    servers: { github: 'ask', offline: 'deny' },
    rules: [
      { id: 'r1', scope: { kind: 'exec_program', program: 'git' }, created_at: '2026-07-26T10:00:00+08:00' },
      { id: 'r2', scope: { kind: 'tool', tool: 'web_fetch' }, created_at: '2026-07-26T11:00:00+08:00' },
    ],
    known_tools: [
      { name: 'read_file', risk: 'read', policy: 'allow', explicit: false },
      { name: 'list_dir', risk: 'read', policy: 'allow', explicit: false },
      { name: 'write_file', risk: 'write', policy: 'allow', explicit: true },
      { name: 'exec', risk: 'exec', policy: 'ask', explicit: false },
      { name: 'github/delete_repo', risk: 'mcp', policy: 'deny', explicit: true, server: 'github', destructive: true },
      { name: 'search_issues', risk: 'mcp', policy: 'ask', explicit: false, server: 'github', read_only: true },
    ],
  };
}

describe('tool policies view', () => {
  it('Scenario: built-in tools are grouped by risk with their explicit or default policy', () => {
    const groups = builtinGroups(policiesFixture());
    expect(groups.map((group) => group.risk)).toEqual(['read', 'write', 'exec']);
    expect(groups[0].tools.map((tool) => tool.label)).toEqual(['list_dir', 'read_file']);
    expect(groups[0].tools[0]).toMatchObject({ choice: 'inherit', inherited: 'allow' });
    expect(groups[1].tools[0]).toMatchObject({ key: 'write_file', choice: 'allow', inherited: 'ask' });
    expect(groups[2].tools[0]).toMatchObject({ key: 'exec', choice: 'inherit', inherited: 'ask' });
  });

  it('Scenario: MCP servers list their tools under server/tool keys and inherit the server policy', () => {
    const servers = serverGroups(policiesFixture());
    expect(servers.map((server) => server.server)).toEqual(['github', 'offline']);
    expect(servers[0]).toMatchObject({ choice: 'ask', inherited: 'ask' });
    expect(servers[0].tools.map((tool) => [tool.key, tool.label, tool.choice, tool.inherited])).toEqual([
      ['github/delete_repo', 'delete_repo', 'deny', 'ask'],
      ['github/search_issues', 'search_issues', 'inherit', 'ask'],
    ]);
    expect(servers[1]).toMatchObject({ choice: 'deny', tools: [] });
    expect(toolKey({ name: 'x', risk: 'mcp', policy: 'ask', explicit: false, server: 's' })).toBe('s/x');
  });

  it('a change sends the whole map it replaces; "Default" removes the entry', () => {
    const policies = policiesFixture();
    expect(toolPolicyChange(policies, 'exec', 'deny')).toEqual({
      tools: { write_file: 'allow', 'github/delete_repo': 'deny', exec: 'deny' },
    });
    expect(toolPolicyChange(policies, 'write_file', 'inherit')).toEqual({ tools: { 'github/delete_repo': 'deny' } });
    expect(serverPolicyChange(policies, 'github', 'inherit')).toEqual({ servers: { offline: 'deny' } });
    expect(defaultPolicyChange(policies, 'network', 'ask').defaults).toEqual({
      read: 'allow',
      write: 'ask',
      network: 'ask',
      exec: 'ask',
      mcp: 'ask',
      memory_write: 'ask',
      schedule_task: 'ask',
      browser_action: 'ask',
    });
    // the response is never mutated
    expect(policies.tools).toEqual({ write_file: 'allow', 'github/delete_repo': 'deny' });
  });

  it('pages the audit log', () => {
    expect(pageRange(0, 20, 45)).toEqual({ from: 1, to: 20, total: 45 });
    expect(pageRange(40, 5, 45)).toEqual({ from: 41, to: 45, total: 45 });
    expect(pageRange(0, 0, 0)).toEqual({ from: 0, to: 0, total: 0 });
  });
});

describe('ToolPoliciesStore', () => {
  let store: ToolPoliciesStore;
  let http: HttpTestingController;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [provideHttpClient(withInterceptors([apiErrorInterceptor])), provideHttpClientTesting(), ToolPoliciesStore],
    });
    store = TestBed.inject(ToolPoliciesStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  async function load(): Promise<void> {
    const loading = store.load();
    http.expectOne('/api/settings/tool-policies').flush(policiesFixture());
    await loading;
  }

  it('Scenario: the policies load with the standing rules newest first', async () => {
    await load();
    expect(store.loading()).toBe(false);
    expect(store.builtin()).toHaveLength(3);
    expect(store.rules().map((rule) => rule.id)).toEqual(['r2', 'r1']);
  });

  it('Scenario: a changed policy is saved at once and the stored state is shown', async () => {
    await load();
    const saving = store.setTool('exec', 'deny');
    expect(store.saving()).toBe('tool:exec');
    const put = http.expectOne('/api/settings/tool-policies');
    expect(put.request.method).toBe('PUT');
    expect(put.request.body).toEqual({ tools: { write_file: 'allow', 'github/delete_repo': 'deny', exec: 'deny' } });
    const saved = policiesFixture();
    saved.tools['exec'] = 'deny';
    put.flush(saved);
    expect(await saving).toBe(true);
    expect(store.builtin().find((group) => group.risk === 'exec')?.tools[0].choice).toBe('deny');
    expect(store.saving()).toBeNull();
  });

  it('a save without a body reads the policies again', async () => {
    await load();
    const saving = store.setDefault('exec', 'deny');
    http.expectOne({ method: 'PUT', url: '/api/settings/tool-policies' }).flush(null, { status: 204, statusText: 'No Content' });
    await settle();
    const reread = policiesFixture();
    reread.defaults.exec = 'deny';
    http.expectOne({ method: 'GET', url: '/api/settings/tool-policies' }).flush(reread);
    expect(await saving).toBe(true);
    expect(store.policies()?.defaults.exec).toBe('deny');
  });

  it('Scenario: a refused save shows the server’s reason and keeps the stored policy', async () => {
    await load();
    const saving = store.setServer('github', 'allow');
    http
      .expectOne('/api/settings/tool-policies')
      .flush({ detail: 'servers.github: unknown server' }, { status: 400, statusText: 'Bad Request', headers: PROBLEM });
    expect(await saving).toBe(false);
    expect(store.saveError()).toBe('servers.github: unknown server');
    expect(store.servers()[0].choice).toBe('ask');
  });

  it('Scenario: revoking a standing rule deletes it and removes it from the list', async () => {
    await load();
    const rule = store.rules()[1];
    const revoking = store.revoke(rule);
    const request = http.expectOne('/api/settings/tool-policies/rules/r1');
    expect(request.request.method).toBe('DELETE');
    request.flush(null, { status: 204, statusText: 'No Content' });
    expect(await revoking).toBe(true);
    expect(store.rules().map((entry) => entry.id)).toEqual(['r2']);
  });

  it('Scenario: the audit log is read page by page', async () => {
    const loading = store.loadAudit(20);
    const request = http.expectOne((r) => r.url === '/api/approvals/audit');
    expect(request.request.params.get('offset')).toBe('20');
    expect(request.request.params.get('limit')).toBe(String(AUDIT_PAGE_SIZE));
    request.flush({
      entries: [
        {
          at: '2026-07-26T12:00:00+08:00',
          chat_id: 'c1',
          call_id: 'k1',
          tool: 'exec',
          risk: 'exec',
          decision: 'deny',
          by: 'user',
          preview: 'rm -rf /',
        },
      ],
      total: 21,
      offset: 20,
      limit: 20,
    });
    await loading;
    expect(store.audit()?.entries).toHaveLength(1);
    const failing = store.loadAudit();
    http.expectOne((r) => r.url === '/api/approvals/audit').flush('boom', { status: 500, statusText: 'Server Error' });
    await failing;
    expect(store.auditError()).toBe('boom');
    // the page already shown stays
    expect(store.audit()?.offset).toBe(20);
  });

  it('a failed load is reported', async () => {
    const loading = store.load();
    http.expectOne('/api/settings/tool-policies').flush({ detail: 'nope' }, { status: 500, statusText: 'Error', headers: PROBLEM });
    await loading;
    expect(store.loadError()).toBe('nope');
    expect(store.policies()).toBeNull();
  });
});
