import { provideHttpClient } from '@angular/common/http';
import { provideHttpClientTesting } from '@angular/common/http/testing';
import { signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import type { SessionSummary } from '@cashcode/contracts';

import { ChatStore } from '../chat/chat-store';
import type { ChatMessage } from '../chat/chat-types';
import { historyLoaded } from '../chat/history-merge';
import { MessageList } from '../chat/message-list/message-list';
import { activateChat, upsertSession } from '../chat/session-reducers';
import { INITIAL_CHAT_STATE } from '../chat/thread-updates';
import { Sidebar } from '../core/layout/sidebar/sidebar';
import { UsageLive } from '../usage/usage-live';

const ALICE_SOURCE = { channel: 'telegram', account: 'cash_test_bot', sender_id: '4242', display_name: 'Alice Example' } as const;
const TELEGRAM_CHAT: SessionSummary = {
  chat_id: 'tg-1',
  title: 'What is on my calendar?',
  updated_at: '2026-12-04T08:00:00',
  channel: { kind: 'telegram', display_name: 'Alice Example', sender_id: '4242', chat_type: 'private' },
};
const CONSOLE_CHAT: SessionSummary = { chat_id: 'c-1', title: 'Plain chat', updated_at: '2026-12-04T07:00:00' };

describe('channel chats', () => {
  it('loaded history keeps the channel source of user rows only', () => {
    const state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'tg-1'), 'tg-1', [
      { role: 'user', content: 'hello from the phone', source: ALICE_SOURCE },
      { role: 'assistant', content: 'hi', source: ALICE_SOURCE },
      { role: 'user', content: 'typed in the console' },
    ]);
    const [first, answer, owner] = state.threads['tg-1'].messages;
    expect(first.source).toEqual(ALICE_SOURCE);
    expect(answer.source).toBeUndefined();
    expect(owner.source).toBeUndefined();
  });

  it("Scenario: A chat title update keeps the chat's channel", () => {
    const listed = { ...INITIAL_CHAT_STATE, sessions: [CONSOLE_CHAT, TELEGRAM_CHAT] };
    const next = upsertSession(listed, { chat_id: 'tg-1', title: 'Calendar today', updated_at: '2026-12-04T08:01:00' });
    expect(next.sessions[0]).toEqual({ ...TELEGRAM_CHAT, title: 'Calendar today', updated_at: '2026-12-04T08:01:00' });
    // a plain chat stays plain
    const plain = upsertSession(listed, { chat_id: 'c-1', title: 'Renamed', updated_at: '2026-12-04T08:02:00' });
    expect(plain.sessions[0].channel).toBeUndefined();
  });

  describe('rendered', () => {
    beforeEach(() => {
      TestBed.configureTestingModule({
        providers: [
          provideHttpClient(),
          provideHttpClientTesting(),
          provideRouter([]),
          {
            provide: ChatStore,
            useValue: {
              sessions: signal([TELEGRAM_CHAT, CONSOLE_CHAT]),
              activeChatId: signal('tg-1'),
              awaitingApproval: signal(new Set<string>()),
              sessionsError: signal(null),
              activeThread: signal(null),
            },
          },
          { provide: UsageLive, useValue: { loadChat: () => Promise.resolve(), chatUsage: () => null } },
        ],
      });
    });

    it("Scenario: A channel chat is listed with the Telegram icon and the sender's name", () => {
      const fixture = TestBed.createComponent(Sidebar);
      fixture.detectChanges();
      const rows = [...(fixture.nativeElement as HTMLElement).querySelectorAll<HTMLElement>('[data-testid="session-row"]')];
      expect(rows.map((row) => row.getAttribute('data-chat-id'))).toEqual(['tg-1', 'c-1']);
      const icon = rows[0].querySelector('[data-testid="session-channel"]');
      expect(icon?.getAttribute('data-channel')).toBe('telegram');
      expect(icon?.getAttribute('aria-label')).toBe('Telegram chat with Alice Example');
      expect(rows[0].querySelector('[data-testid="session-channel-sender"]')?.textContent?.trim()).toBe('Alice Example');
      expect(rows[0].querySelector('[data-testid="session-title"]')?.textContent?.trim()).toBe('What is on my calendar?');
      expect(rows[1].querySelector('[data-testid="session-channel"]')).toBeNull();
      expect(rows[1].querySelector('[data-testid="session-channel-sender"]')).toBeNull();
    });

    it('Scenario: A user message from Telegram is shown with its sender', () => {
      const fixture = TestBed.createComponent(MessageList);
      const message = (id: number, content: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({
        id,
        role: 'user',
        content,
        streaming: false,
        tools: [],
        cancelled: false,
        ...extra,
      });
      fixture.componentRef.setInput('messages', [message(1, 'hello from the phone', { source: ALICE_SOURCE }), message(2, 'typed in the console')]);
      fixture.componentRef.setInput('chatId', 'tg-1');
      fixture.detectChanges();
      const rows = [...(fixture.nativeElement as HTMLElement).querySelectorAll<HTMLElement>('li.cc-row')];
      expect(rows).toHaveLength(2);
      expect(rows[0].querySelector('[data-testid="message-source"]')?.textContent?.trim()).toBe('via Telegram · Alice Example');
      expect(rows[1].querySelector('[data-testid="message-source"]')).toBeNull();
    });
  });
});
