import { TestBed } from '@angular/core/testing';
import { MatSnackBar } from '@angular/material/snack-bar';
import { Router } from '@angular/router';
import type { ServerEvent } from '@cashcode/contracts';
import { Subject, of } from 'rxjs';

import { ChatStore } from '../chat/chat-store';
import { ChatSocket } from '../core/socket/chat-socket';
import { AutomationNotices } from './automation-notices';
import { run } from './automation-testing';

describe('AutomationNotices', () => {
  const events = new Subject<ServerEvent>();
  let shown: { title: string; options: NotificationOptions; instance: { onclick: (() => void) | null } }[];
  let visibility: DocumentVisibilityState;
  let snacks: { message: string; action?: string }[];
  let navigated: string[];
  let sessionReloads: number;

  beforeEach(() => {
    localStorage.clear();
    shown = [];
    snacks = [];
    navigated = [];
    sessionReloads = 0;
    visibility = 'hidden';
    vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
    class FakeNotification {
      static permission: NotificationPermission = 'granted';
      static requestPermission = vi.fn(() => Promise.resolve('granted'));
      onclick: (() => void) | null = null;
      constructor(title: string, options: NotificationOptions) {
        shown.push({ title, options, instance: this });
      }
      close(): void {}
    }
    vi.stubGlobal('Notification', FakeNotification);
    TestBed.configureTestingModule({
      providers: [
        { provide: ChatSocket, useValue: { events: events.asObservable() } },
        { provide: MatSnackBar, useValue: { open: (message: string, action?: string) => (snacks.push({ message, action }), { onAction: () => of() }) } },
        { provide: ChatStore, useValue: { loadSessions: () => (sessionReloads++, Promise.resolve()) } },
        { provide: Router, useValue: { navigateByUrl: (url: string) => (navigated.push(url), Promise.resolve(true)) } },
      ],
    });
    TestBed.inject(AutomationNotices).start();
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  const emit = (partial: Parameters<typeof run>[0]) =>
    events.next({ event: 'automation_run', type: 'automation_run', run: run(partial), automation_name: 'Morning brief' } as never);

  it('Scenario: a run that ends while the tab is hidden shows a browser notification that opens its chat', () => {
    emit({ outcome: 'running', ended_at: null });
    expect(shown).toHaveLength(0);
    emit({ outcome: 'ok' });
    expect(shown).toHaveLength(1);
    expect(shown[0]?.title).toBe('Automation “Morning brief” finished');
    expect(shown[0]?.options).toMatchObject({ tag: 'automation:r1', body: 'Done' });
    shown[0]?.instance.onclick?.();
    expect(navigated).toEqual(['/chat/automation-a1']);
    expect(snacks).toHaveLength(0);
    // the run's chat joins the sidebar's history
    expect(sessionReloads).toBe(1);
  });

  it('Scenario: a run that ends while the tab is visible shows a snack bar instead', () => {
    visibility = 'visible';
    emit({ id: 'r2', outcome: 'budget_exceeded', error: 'The budget of 1,000 tokens was reached.' });
    expect(shown).toHaveLength(0);
    expect(snacks).toEqual([
      { message: 'Automation “Morning brief” did not finish · Budget reached: The budget of 1,000 tokens was reached.', action: 'Open chat' },
    ]);
  });
});
