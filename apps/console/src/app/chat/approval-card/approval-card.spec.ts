import { ApplicationRef, signal, type WritableSignal } from '@angular/core';
import { TestBed, type ComponentFixture } from '@angular/core/testing';
import type { ExecSandboxStatus } from '@cashcode/contracts';

import { ExecSandbox } from '../../core/approvals/exec-sandbox';
import { I18n } from '../../core/i18n/i18n';
import type { ApprovalState } from '../approval-state';
import { ChatStore } from '../chat-store';
import { ApprovalCard } from './approval-card';

const COMMAND = `git status && git log --oneline | head -n 50 && echo ${'x'.repeat(400)}`;

function approval(overrides: Partial<ApprovalState> = {}): ApprovalState {
  return {
    callId: 'call-1',
    tool: 'exec',
    risk: 'exec',
    arguments: JSON.stringify({ command: COMMAND }),
    command: null,
    commands: null,
    unanalysed: null,
    cwd: null,
    expiresAt: new Date(Date.now() + 125_000).toISOString(),
    alwaysScope: { kind: 'exec_program', program: 'git' },
    sandboxed: false,
    server: null,
    destructive: false,
    sent: null,
    resolution: null,
    ...overrides,
  };
}

describe('ApprovalCard', () => {
  let decide: ReturnType<typeof vi.fn>;
  let sandboxStatus: WritableSignal<ExecSandboxStatus | null>;
  let sandboxLoad: ReturnType<typeof vi.fn>;

  beforeEach(() => {
    localStorage.clear();
    decide = vi.fn(() => true);
    sandboxStatus = signal<ExecSandboxStatus | null>(null);
    sandboxLoad = vi.fn(() => Promise.resolve());
    TestBed.configureTestingModule({
      providers: [
        { provide: ChatStore, useValue: { decide } },
        { provide: ExecSandbox, useValue: { status: sandboxStatus, error: signal(null), load: sandboxLoad } },
      ],
    });
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    localStorage.clear();
  });

  async function render(state: ApprovalState): Promise<{ fixture: ComponentFixture<ApprovalCard>; element: HTMLElement }> {
    const fixture = TestBed.createComponent(ApprovalCard);
    fixture.componentRef.setInput('approval', state);
    await fixture.whenStable();
    return { fixture, element: fixture.nativeElement as HTMLElement };
  }

  const button = (element: HTMLElement, id: string) => element.querySelector<HTMLButtonElement>(`[data-testid="${id}"]`)!;

  it('Scenario: the approval card shows the tool, the risk, the full command and whether it runs sandboxed', async () => {
    const { element } = await render(approval());
    expect(element.querySelector('[data-testid="approval-tool"]')?.textContent).toBe('exec');
    expect(element.querySelector('[data-testid="approval-risk"]')?.textContent?.trim()).toBe('Risk: Exec');
    // the whole command, never cut (the box scrolls instead)
    expect(element.querySelector('[data-testid="approval-arguments"]')?.textContent).toBe(COMMAND);
    expect(element.querySelector('.cc-label')?.textContent).toBe('Command');
    const sandbox = element.querySelector('[data-testid="approval-sandbox"]')!;
    expect(sandbox.getAttribute('data-sandbox')).toBe('unconfined');
    expect(sandbox.textContent).toContain('UNCONFINED');
    expect(sandboxLoad).not.toHaveBeenCalled();
    expect(element.querySelector('[data-testid="approval-no-rule"]')).toBeNull();
  });

  it('Scenario: the card shows a multi-command line in full and marks every command it runs', async () => {
    const line = `echo "password='" ; id > HIDDEN_RAN.txt ; echo "'"`;
    const { element } = await render(
      approval({
        arguments: JSON.stringify({ command: line }),
        command: line,
        commands: [
          { program: 'echo', start: 0, end: 17 },
          { program: 'id', start: 20, end: 39 },
          { program: 'echo', start: 42, end: line.length },
        ],
        alwaysScope: null,
        cwd: '/skills/report',
      }),
    );
    const box = element.querySelector('[data-testid="approval-arguments"]')!;
    expect(element.querySelector('[data-testid="approval-cwd"]')?.textContent).toContain('/skills/report');
    // every byte, nothing redacted
    expect(box.textContent).toBe(line);
    const parts = [...box.querySelectorAll('[data-testid="approval-command-part"]')].map((part) => part.textContent);
    expect(parts).toEqual([`echo "password='"`, 'id > HIDDEN_RAN.txt', `echo "'"`]);
    expect(element.querySelector('[data-testid="approval-commands"]')?.textContent).toContain('3 separate commands: echo, id, echo');
  });

  it('Scenario: invisible and direction-changing characters are shown, never applied', async () => {
    const line = 'ls \u202Etxt.exe\u2066 ; echo\u200Bhi';
    const command = JSON.parse(`"${line}"`) as string;
    const { element } = await render(approval({ arguments: JSON.stringify({ command }), command, unanalysed: 'unusual characters' }));
    const box = element.querySelector('[data-testid="approval-arguments"]')!;
    const badges = [...box.querySelectorAll('[data-testid="approval-hidden-char"]')].map((badge) => badge.textContent);
    expect(badges).toEqual(['U+202E RLO', 'U+2066 LRI', 'U+200B ZWSP']);
    // no direction control reaches the page's text
    expect(box.textContent).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B]/);
    expect(element.querySelector('[data-testid="approval-hidden-note"]')).not.toBeNull();
    expect(element.querySelector('[data-testid="approval-unanalysed"]')?.textContent).toContain('unusual characters');
  });

  it('says what an exact command rule does not cover: the files the program reads', async () => {
    const { element } = await render(approval({ alwaysScope: { kind: 'exec_command', argv: ['npm', 'test'] } }));
    expect(element.querySelector('[data-testid="approval-exact-rule"]')?.textContent).toContain('reads files in the workspace');
    const plain = await render(approval());
    expect(plain.element.querySelector('[data-testid="approval-exact-rule"]')).toBeNull();
  });

  it('offers no Always allow when the server offers no rule scope (it would only allow once)', async () => {
    const { element } = await render(approval({ alwaysScope: null }));
    expect(element.querySelector('[data-testid="approval-allow-always"]')).toBeNull();
    expect(element.querySelector('[data-testid="approval-no-rule"]')?.textContent).toBe(
      'No standing rule can cover this call, so it is asked every time.',
    );
    expect(element.querySelector('[data-testid="approval-allow-once"]')).not.toBeNull();
  });

  it('asks the sandbox status when the request does not say, and shows it', async () => {
    const { fixture, element } = await render(approval({ sandboxed: null }));
    expect(sandboxLoad).toHaveBeenCalled();
    expect(element.querySelector('[data-testid="approval-sandbox"]')?.getAttribute('data-sandbox')).toBe('checking');
    sandboxStatus.set({ mode: 'auto', active: true, kind: 'bwrap', network: false });
    await fixture.whenStable();
    const sandbox = element.querySelector('[data-testid="approval-sandbox"]')!;
    expect(sandbox.getAttribute('data-sandbox')).toBe('sandboxed');
    expect(sandbox.textContent).toContain('Runs in the sandbox');
    expect(sandbox.textContent).toContain('bwrap, no network');
    sandboxStatus.set({ mode: 'auto', active: false, kind: null, network: true, reason: 'bwrap is not installed' });
    await fixture.whenStable();
    expect(element.querySelector('[data-testid="approval-sandbox"]')?.textContent).toContain('Sandbox not active: bwrap is not installed');
  });

  it('Scenario: focus moves to the card when it appears; the buttons have clear names and are reached by Tab', async () => {
    const { element } = await render(approval());
    const card = element.querySelector<HTMLElement>('[data-testid="approval-card"]')!;
    expect(document.activeElement).toBe(card);
    expect(card.getAttribute('role')).toBe('group');
    expect(document.getElementById(card.getAttribute('aria-labelledby')!)?.textContent?.trim()).toBe('Approval needed');
    expect(button(element, 'approval-allow-once').textContent?.trim()).toBe('Allow once');
    expect(button(element, 'approval-allow-always').getAttribute('aria-label')).toBe('Always allow git');
    expect(button(element, 'approval-allow-always').textContent?.replace(/\s+/g, ' ').trim()).toBe('Always allow git');
    expect(button(element, 'approval-deny').textContent?.trim()).toBe('Deny');
    // native buttons in document order: Enter and Space activate them, Tab reaches them
    for (const id of ['approval-allow-once', 'approval-allow-always', 'approval-deny']) {
      expect(button(element, id).tagName).toBe('BUTTON');
      expect(button(element, id).tabIndex).toBe(0);
    }
  });

  it('does not steal the focus from a field the user is typing in', async () => {
    const input = document.createElement('input');
    document.body.appendChild(input);
    input.focus();
    await render(approval());
    expect(document.activeElement).toBe(input);
    input.remove();
  });

  it('Scenario: Allow once, Always allow and Deny send the decision for the call', async () => {
    const { element } = await render(approval());
    button(element, 'approval-allow-always').click();
    expect(decide).toHaveBeenCalledWith('call-1', 'allow_always');
    button(element, 'approval-allow-once').click();
    expect(decide).toHaveBeenLastCalledWith('call-1', 'allow_once');
    button(element, 'approval-deny').click();
    expect(decide).toHaveBeenLastCalledWith('call-1', 'deny');
  });

  it('a sent decision disables the buttons until the server settles it; a failed send says so', async () => {
    const { fixture, element } = await render(approval({ sent: 'deny' }));
    expect(button(element, 'approval-deny').disabled).toBe(true);
    expect(element.querySelector('[data-testid="approval-sending"]')).not.toBeNull();
    button(element, 'approval-deny').click();
    expect(decide).not.toHaveBeenCalled();
    decide.mockReturnValue(false);
    fixture.componentRef.setInput('approval', approval());
    await fixture.whenStable();
    button(element, 'approval-deny').click();
    await fixture.whenStable();
    expect(element.querySelector('[role="alert"]')?.textContent).toContain('Not connected');
  });

  it('Scenario: a countdown runs to expires_at', async () => {
    // only the clock and the card's interval: Angular's scheduler keeps its real timers
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    vi.setSystemTime(new Date('2026-07-26T04:00:00Z'));
    const { fixture, element } = await render(approval({ expiresAt: '2026-07-26T12:02:05+08:00' }));
    const countdown = () => element.querySelector('[data-testid="approval-countdown"]')?.textContent?.trim();
    expect(countdown()).toBe('Denied automatically in 2:05');
    vi.advanceTimersByTime(5_000);
    await fixture.whenStable();
    expect(countdown()).toBe('Denied automatically in 2:00');
    vi.advanceTimersByTime(120_000);
    await fixture.whenStable();
    expect(countdown()).toBe('Expiring…');
    expect(element.querySelector('.cc-countdown.cc-urgent')).not.toBeNull();
  });

  it('Scenario: on approval_resolved the card shows the outcome instead of the buttons', async () => {
    const { fixture, element } = await render(approval());
    const outcome = async (resolution: ApprovalState['resolution']) => {
      fixture.componentRef.setInput('approval', approval({ resolution }));
      await fixture.whenStable();
      return element.querySelector('[data-testid="approval-outcome"]')?.textContent?.trim();
    };
    expect(await outcome({ decision: 'allow_once', by: 'user' })).toBe('Allowed once');
    expect(element.querySelector('[data-testid="approval-allow-once"]')).toBeNull();
    expect(element.querySelector('[data-testid="approval-countdown"]')).toBeNull();
    expect(element.getAttribute('data-outcome')).toBe('allowedOnce');
    expect(await outcome({ decision: 'allow_always', by: 'user' })).toBe('Always allowed: git');
    expect(await outcome({ decision: 'deny', by: 'user' })).toBe('Denied by you');
    expect(await outcome({ decision: 'deny', by: 'timeout' })).toBe('Expired: denied because nobody answered in time');
    expect(await outcome({ decision: 'deny', by: 'cancel' })).toBe('Cancelled: the turn ended before a decision');
  });

  it('reads in Simplified Chinese', async () => {
    TestBed.inject(I18n).setLanguage('zh-CN');
    const { element } = await render(approval());
    expect(element.querySelector('.cc-heading')?.textContent?.trim()).toBe('需要你的审批');
    expect(button(element, 'approval-allow-always').getAttribute('aria-label')).toBe('始终允许 git');
    expect(element.querySelector('[data-testid="approval-sandbox"]')?.textContent).toContain('UNCONFINED');
  });

  it('Scenario: a browser_action card shows the action, the element, the page and the text', async () => {
    const { element } = await render(
      approval({
        tool: 'browser',
        risk: 'browser_action',
        arguments: '{"action":"type","ref":"e2","text":"cats","submit":true}',
        alwaysScope: null,
        sandboxed: null,
        browser: { action: 'type', element: 'textbox "Query" [e2]', url: 'https://shop.test/', reason: 'form_submit', text: 'cats' },
      }),
    );
    const card = element.querySelector('[data-testid="approval-browser"]')!;
    expect(card.textContent).toContain('This browser action submits a form');
    expect(element.querySelector('[data-testid="approval-browser-action"]')?.textContent).toBe('type · textbox "Query" [e2]');
    expect(element.querySelector('[data-testid="approval-browser-url"]')?.textContent).toBe('https://shop.test/');
    expect(element.querySelector('[data-testid="approval-browser-text"]')?.textContent).toBe('cats');
    expect(element.querySelector('[data-testid="approval-risk"]')?.textContent).toContain('Browser actions that submit forms');
    expect(element.querySelector('[data-testid="approval-sandbox"]')).toBeNull();
  });

  it('shows MCP arguments as JSON with the server and the destructive hint', async () => {
    const { element } = await render(
      approval({
        tool: 'create_issue',
        risk: 'mcp',
        server: 'github',
        destructive: true,
        arguments: '{"title":"Bug","body":"Steps"}',
        alwaysScope: { kind: 'mcp_tool', server: 'github', tool: 'create_issue' },
        sandboxed: null,
      }),
    );
    expect(element.querySelector('.cc-label')?.textContent).toBe('Arguments');
    expect(element.querySelector('[data-testid="approval-arguments"]')?.textContent).toBe('{\n  "title": "Bug",\n  "body": "Steps"\n}');
    expect(element.textContent).toContain('MCP server github');
    expect(element.textContent).toContain('Declared destructive');
    expect(element.querySelector('[data-testid="approval-sandbox"]')).toBeNull();
    expect(button(element, 'approval-allow-always').getAttribute('aria-label')).toBe('Always allow github/create_issue');
    expect(sandboxLoad).not.toHaveBeenCalled();
  });

  it('Scenario: a proposed automation is shown on its approval card with its schedule, next runs, tools and prompt', async () => {
    const { element } = await render(
      approval({
        tool: 'schedule_task',
        risk: 'schedule_task',
        arguments: '{}',
        alwaysScope: null,
        sandboxed: null,
        proposedAutomation: {
          name: 'Daily digest',
          prompt: 'Summarise the news.',
          schedule: { kind: 'cron', expression: '0 7 * * *', timezone: 'UTC' },
          schedule_description: 'At 07:00 (UTC)',
          next: ['2026-12-05T07:00:00Z', '2026-12-06T07:00:00Z'],
          tools: ['web_search', 'web_fetch'],
          mcp_servers: null,
          skills: null,
        },
      }),
    );
    const card = element.querySelector('[data-testid="approval-automation"]')!;
    expect(card.textContent).toContain('The agent proposes the automation “Daily digest”');
    expect(element.querySelector('[data-testid="approval-automation-schedule"]')?.textContent?.trim()).toBe('At 07:00 (UTC)');
    expect(card.textContent).toContain('Next runs: ');
    expect(card.textContent).toContain('2026');
    expect(card.textContent).toContain('Tools: web_search, web_fetch');
    expect(element.querySelector('[data-testid="approval-automation-prompt"]')?.textContent).toBe('Summarise the news.');
    expect(element.querySelector('[data-testid="approval-risk"]')?.textContent).toContain('Scheduling an automation');
  });

  it('offers browser notifications from the card (a user gesture) when permission was not asked yet', async () => {
    const requestPermission = vi.fn(() => Promise.resolve('granted' as NotificationPermission));
    vi.stubGlobal('Notification', Object.assign(function Notification() {}, { permission: 'default', requestPermission }));
    const { fixture, element } = await render(approval());
    const notify = button(element, 'approval-notify');
    expect(notify.textContent?.trim()).toBe('Notify me when a tool waits');
    notify.click();
    await TestBed.inject(ApplicationRef).whenStable();
    await fixture.whenStable();
    expect(requestPermission).toHaveBeenCalledTimes(1);
    expect(element.querySelector('[data-testid="approval-notify"]')).toBeNull();
    expect(element.textContent).toContain('You will get a notification');
  });
});
