import { TestBed } from '@angular/core/testing';
import { MAT_DIALOG_DATA, MatDialogRef } from '@angular/material/dialog';
import { provideRouter } from '@angular/router';
import type { McpServerRecord, McpServerToolsResponse, McpToolRecord, ToolPoliciesResponse } from '@cashcode/contracts';

import { I18n } from '../../core/i18n/i18n';
import { toolApproval, toolBadges, toolTitle } from '../mcp-tool-view';
import { McpToolsDialog, type McpToolsDialogData } from './mcp-tools-dialog';

const server: McpServerRecord = {
  name: 'kit',
  display_name: 'Test kit',
  description: '',
  type: 'sse',
  url: 'http://127.0.0.1:1/sse',
  headers: {},
  builtin: false,
  mutable: true,
  status: 'connected',
  connected: true,
  status_error: null,
  tool_count: 3,
};

function tool(original: string, extra: Partial<McpToolRecord> = {}): McpToolRecord {
  return {
    name: `mcp_kit_${original}`,
    original_name: original,
    description: `${original} description`,
    input_schema: { type: 'object', properties: {} },
    source: 'live',
    callable: true,
    ...extra,
  };
}

const sayHello = tool('say_hello', { title: 'Say hello', annotations: { readOnlyHint: true, idempotentHint: true } });
const fail = tool('fail', { annotations: { destructiveHint: true, openWorldHint: false } });
const fetchPage = tool('fetch_page', { annotations: { title: 'Fetch a page', openWorldHint: true } });
const plain = tool('plain');

function toolsResponse(tools: McpToolRecord[]): McpServerToolsResponse {
  return { server: 'kit', display_name: 'Test kit', tools, source: 'live', status: 'connected', status_error: null, tool_count: tools.length };
}

function policies(extra: Partial<ToolPoliciesResponse> = {}): ToolPoliciesResponse {
  return {
    defaults: { read: 'allow', write: 'allow', network: 'allow', exec: 'ask', mcp: 'ask', memory_write: 'ask', schedule_task: 'ask', browser_action: 'ask' },
    tools: {},
    servers: {},
    rules: [],
    known_tools: [
      { name: 'kit/say_hello', risk: 'read', policy: 'allow', explicit: false, server: 'kit', read_only: true, title: 'Say hello' },
      { name: 'kit/fail', risk: 'mcp', policy: 'deny', explicit: true, server: 'kit', destructive: true },
      { name: 'kit/fetch_page', risk: 'mcp', policy: 'ask', explicit: false, server: 'kit' },
    ],
    ...extra,
  };
}

describe('MCP tools dialog: annotations', () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  beforeEach(() => localStorage.clear());
  afterEach(() => localStorage.clear());

  async function render(data: Omit<McpToolsDialogData, 'server'>, lang: 'en' | 'zh-CN' = 'en'): Promise<HTMLElement> {
    TestBed.configureTestingModule({
      providers: [
        provideRouter([]),
        { provide: MAT_DIALOG_DATA, useValue: { server, ...data } },
        { provide: MatDialogRef, useValue: { close: () => undefined } },
      ],
    });
    TestBed.inject(I18n).setLanguage(lang);
    const fixture = TestBed.createComponent(McpToolsDialog);
    await settle();
    await fixture.whenStable();
    fixture.detectChanges();
    return fixture.nativeElement as HTMLElement;
  }

  const toolItem = (element: HTMLElement, name: string) => element.querySelector<HTMLElement>(`[data-testid="mcp-tool"][data-tool="${name}"]`)!;
  const badges = (item: HTMLElement) =>
    [...item.querySelectorAll<HTMLElement>('[data-testid="mcp-tool-badge"]')].map((badge) => badge.textContent!.trim());
  const approval = (item: HTMLElement) => item.querySelector<HTMLElement>('[data-testid="mcp-tool-approval"]')!;

  it('Scenario: the tools dialog marks task-only tools and lists the server resources', async () => {
    const research = tool('research', { callable: false, unavailable_reason: 'task_required' });
    const element = await render({
      load: () => Promise.resolve(toolsResponse([sayHello, research])),
      resources: () =>
        Promise.resolve({
          server: 'kit',
          status: 'connected',
          truncated: false,
          resources: [{ uri: 'demo://doc/a.md', name: 'a.md', mime_type: 'text/markdown' }],
        }),
    });
    expect(toolItem(element, 'research').querySelector('[data-testid="mcp-tool-task-required"]')?.textContent).toContain(
      'the model never sees this tool',
    );
    expect(toolItem(element, 'say_hello').querySelector('[data-testid="mcp-tool-task-required"]')).toBeNull();
    const resources = [...element.querySelectorAll<HTMLElement>('[data-testid="mcp-resource"]')];
    expect(resources.map((r) => r.getAttribute('data-uri'))).toEqual(['demo://doc/a.md']);
    expect(resources[0]!.textContent).toContain('text/markdown');
  });

  it('Scenario: the tools dialog shows each tool’s title, annotation badges and effective approval', async () => {
    const element = await render({
      load: () => Promise.resolve(toolsResponse([sayHello, fail, fetchPage, plain])),
      policies: () => Promise.resolve(policies()),
    });
    const hello = toolItem(element, 'say_hello');
    expect(hello.querySelector('[data-testid="mcp-tool-title"]')?.textContent).toBe('Say hello');
    expect(hello.querySelector('.cc-tool-name')?.textContent).toBe('mcp_kit_say_hello');
    expect(hello.querySelector('[data-testid="mcp-tool-badges"]')?.getAttribute('aria-label')).toBe('Hints declared by the server');
    expect(badges(hello)).toEqual(['Read-only', 'Idempotent']);
    expect(hello.querySelector('[data-badge="readOnly"]')?.getAttribute('title')).toBe('The server says this tool does not change anything');
    expect(approval(hello).textContent?.trim()).toBe('Runs without asking');
    expect(approval(hello).getAttribute('data-source')).toBe('policy');

    const failing = toolItem(element, 'fail');
    expect(failing.querySelector('[data-testid="mcp-tool-title"]')).toBeNull();
    // openWorldHint: false declares no badge
    expect(badges(failing)).toEqual(['Destructive']);
    expect(approval(failing).textContent?.trim()).toBe('Blocked by your tool policy');

    const fetching = toolItem(element, 'fetch_page');
    expect(fetching.querySelector('[data-testid="mcp-tool-title"]')?.textContent).toBe('Fetch a page');
    expect(badges(fetching)).toEqual(['Open world']);
    expect(approval(fetching).textContent?.trim()).toBe('Asks before running');

    const bare = toolItem(element, 'plain');
    expect(bare.querySelector('[data-testid="mcp-tool-badges"]')).toBeNull();
    // not in known_tools: resolved from the stored policies (the mcp default)
    expect(approval(bare).textContent?.trim()).toBe('Asks before running');

    const link = element.querySelector<HTMLAnchorElement>('[data-testid="mcp-tools-policy-link"]')!;
    expect(link.getAttribute('href')).toBe('/settings/tools');
    expect(link.textContent).toBe('Settings → Tools & approvals');
    expect(element.querySelector('[data-testid="mcp-tools-policies-failed"]')).toBeNull();
  });

  it('Scenario: without the tool policies the dialog shows the defaults (read-only runs, the rest asks)', async () => {
    const element = await render({
      load: () => Promise.resolve(toolsResponse([sayHello, fail])),
      policies: () => Promise.reject(new Error('offline')),
    });
    expect(approval(toolItem(element, 'say_hello')).textContent?.trim()).toBe('Runs without asking');
    expect(approval(toolItem(element, 'say_hello')).getAttribute('data-source')).toBe('hint');
    expect(approval(toolItem(element, 'fail')).textContent?.trim()).toBe('Asks before running');
    expect(element.querySelector('[data-testid="mcp-tools-policies-failed"]')?.textContent).toContain('could not be read');
  });

  it('Scenario: the badges and approvals are shown in Chinese', async () => {
    const element = await render(
      {
        load: () => Promise.resolve(toolsResponse([sayHello, fail, fetchPage])),
        policies: () => Promise.resolve(policies({ known_tools: [] })),
      },
      'zh-CN',
    );
    expect(badges(toolItem(element, 'say_hello'))).toEqual(['只读', '幂等']);
    expect(badges(toolItem(element, 'fail'))).toEqual(['破坏性']);
    expect(badges(toolItem(element, 'fetch_page'))).toEqual(['开放世界']);
    expect(toolItem(element, 'say_hello').querySelector('[data-testid="mcp-tool-badges"]')?.getAttribute('aria-label')).toBe('服务声明的提示');
    expect(approval(toolItem(element, 'say_hello')).textContent?.trim()).toBe('无需询问即可运行');
    expect(approval(toolItem(element, 'fail')).textContent?.trim()).toBe('运行前询问');
    expect(element.querySelector('[data-testid="mcp-tools-policy-link"]')?.textContent).toBe('设置 → 工具与审批');
  });
});

describe('MCP tool view', () => {
  it('titles come from `title`, else `annotations.title`, and repeat no name', () => {
    expect(toolTitle(sayHello)).toBe('Say hello');
    expect(toolTitle(fetchPage)).toBe('Fetch a page');
    expect(toolTitle(plain)).toBeNull();
    expect(toolTitle(tool('same', { title: 'same' }))).toBeNull();
  });

  it('badges follow the hints declared true, in a fixed order', () => {
    expect(toolBadges(tool('all', { annotations: { openWorldHint: true, idempotentHint: true, destructiveHint: true, readOnlyHint: true } }))).toEqual([
      'readOnly',
      'destructive',
      'idempotent',
      'openWorld',
    ]);
    expect(toolBadges(tool('none', { annotations: { readOnlyHint: false, destructiveHint: false } }))).toEqual([]);
  });

  it('the approval follows known_tools, else tool, server and risk policies, else the defaults', () => {
    expect(toolApproval('kit', fail, policies())).toEqual({ policy: 'deny', source: 'policy' });
    const stored = policies({ known_tools: [], tools: { 'kit/plain': 'allow' }, servers: { kit: 'deny' } });
    expect(toolApproval('kit', plain, stored).policy).toBe('allow');
    expect(toolApproval('kit', fail, stored).policy).toBe('deny');
    expect(toolApproval('kit', sayHello, policies({ known_tools: [] })).policy).toBe('allow');
    expect(toolApproval('kit', sayHello, null)).toEqual({ policy: 'allow', source: 'hint' });
    expect(toolApproval('kit', plain, null)).toEqual({ policy: 'ask', source: 'hint' });
  });
});
