import { provideHttpClient, withInterceptors } from '@angular/common/http';
import { HttpTestingController, provideHttpClientTesting } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';

import { apiErrorInterceptor } from '../core/api/api-error.interceptor';
import { WEB_SOCKET_FACTORY, type SocketLike } from '../core/socket/chat-socket';
import { WsEndpoint } from '../core/socket/ws-endpoint';
import { ChatStore } from './chat-store';

class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  readonly sent: Record<string, unknown>[] = [];

  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(): void {
    this.readyState = 3;
  }
  open(readyChat: string): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
    this.emit({ event: 'ready', chat_id: readyChat, client_id: 'client-0123456789ab' });
  }
  emit(event: Record<string, unknown>): void {
    this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(event) }));
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.(new CloseEvent('close'));
  }
}

describe('ChatStore', () => {
  let sockets: FakeSocket[];
  let store: ChatStore;
  let http: HttpTestingController;

  const flushAsync = () => vi.advanceTimersByTimeAsync(0);

  beforeEach(() => {
    vi.useFakeTimers();
    sessionStorage.clear();
    localStorage.clear();
    sockets = [];
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiErrorInterceptor])),
        provideHttpClientTesting(),
        { provide: WsEndpoint, useValue: { resolve: () => Promise.resolve({ url: 'ws://gateway.test/', tokenMissing: false }) } },
        {
          provide: WEB_SOCKET_FACTORY,
          useValue: () => {
            const socket = new FakeSocket();
            sockets.push(socket);
            return socket;
          },
        },
      ],
    });
    store = TestBed.inject(ChatStore);
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  async function startWithSessions(ids: string[]): Promise<void> {
    store.init();
    http.expectOne('/api/sessions').flush({
      sessions: ids.map((chat_id, index) => ({ chat_id, title: chat_id.toUpperCase(), updated_at: `2026-01-0${index + 1}T10:00:00` })),
    });
    await flushAsync();
  }

  it('Scenario: the open chat is re-attached after a reconnect', async () => {
    await startWithSessions(['s1']);
    http.expectOne('/api/sessions/s1/messages').flush({ chat_id: 's1', messages: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
    expect(sockets[0].sent).toContainEqual({ type: 'attach', chat_id: 's1' });
    expect(store.activeChatId()).toBe('s1');

    sockets[0].drop();
    expect(store.connection()).toBe('disconnected');
    await vi.advanceTimersByTimeAsync(1000);
    expect(sockets).toHaveLength(2);
    sockets[1].open('fresh-2');
    expect(sockets[1].sent).toEqual([{ type: 'attach', chat_id: 's1' }]);
    expect(store.activeChatId()).toBe('s1');
  });

  it('Scenario: a turn that was streaming resyncs its history when it ends after a reconnect', async () => {
    await startWithSessions(['s1']);
    http.expectOne('/api/sessions/s1/messages').flush({ chat_id: 's1', messages: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
    store.selectModel({ provider: 'openai_compatible', model: 'm1' });
    expect(store.send('  hi  ')).toEqual({ ok: true });
    sockets[0].emit({ event: 'delta', chat_id: 's1', text: 'Hel', stream_id: 1 });
    sockets[0].drop();
    await vi.advanceTimersByTimeAsync(1000);
    sockets[1].open('fresh-2');
    sockets[1].emit({ event: 'attached', chat_id: 's1', turn_active: true });
    expect(store.generating()).toBe(true);
    sockets[1].emit({ event: 'done', chat_id: 's1', duration_sec: 1, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, cancelled: false });
    expect(store.generating()).toBe(false);
    http.expectOne('/api/sessions/s1/messages').flush({
      chat_id: 's1',
      messages: [
        { role: 'user', content: '  hi  ' },
        { role: 'assistant', content: 'Hello there' },
      ],
    });
    http.expectOne('/api/sessions').flush({ sessions: [] });
    await flushAsync();
    expect(store.messages().map((message) => message.content)).toEqual(['  hi  ', 'Hello there']);
  });

  it("Scenario: A Telegram turn in the open chat shows the sender's message when it ends", async () => {
    await startWithSessions(['tg-1']);
    http.expectOne('/api/sessions/tg-1/messages').flush({ chat_id: 'tg-1', messages: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
    // the turn came from Telegram: this console sent nothing, the answer streams in
    sockets[0].emit({ event: 'delta', chat_id: 'tg-1', text: 'Sunny', stream_id: 1 });
    expect(store.messages().map((message) => message.content)).toEqual(['Sunny']);
    sockets[0].emit({ event: 'stream_end', chat_id: 'tg-1', stream_id: 1 });
    sockets[0].emit({ event: 'done', chat_id: 'tg-1', duration_sec: 1, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, cancelled: false });
    const source = { channel: 'telegram', account: 'cash_test_bot', sender_id: '4242', display_name: 'Alice Example' };
    http.expectOne('/api/sessions/tg-1/messages').flush({
      chat_id: 'tg-1',
      messages: [
        { role: 'user', content: 'Weather?', source },
        { role: 'assistant', content: 'Sunny' },
      ],
    });
    http.expectOne('/api/sessions').flush({ sessions: [] });
    await flushAsync();
    expect(store.messages().map((message) => [message.content, message.source?.display_name])).toEqual([
      ['Weather?', 'Alice Example'],
      ['Sunny', undefined],
    ]);
  });

  it('Scenario: a WS error with a known code is shown localized, an unknown code keeps the server detail', async () => {
    store.init();
    http.expectOne('/api/sessions').flush({ sessions: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
    sockets[0].emit({ event: 'error', detail: 'LLM is not configured (ollama): …', code: 'llm_not_configured' });
    expect(store.banner()).toBe('The LLM is not configured: open Settings > LLM settings to set up a connection.');
    sockets[0].emit({ event: 'error', detail: 'frame too large', code: 'frame_too_large' });
    expect(store.banner()).toBe('frame too large');
  });

  it('Scenario: a turn refused by a spend limit says which limit, what was spent and when it resets', async () => {
    store.init();
    http.expectOne('/api/sessions').flush({ sessions: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
    const limit = {
      id: 'daily',
      scope: 'global',
      window: 'day',
      unit: 'money',
      currency: 'USD',
      amount: 2,
      used: 2.5,
      reserved: 0,
      share: 1.25,
      state: 'reached',
      resets_at: '2026-12-03T00:00:00+00:00',
    };
    store.selectModel({ provider: 'openai_compatible', model: 'm1' });
    expect(store.send('over the limit')).toEqual({ ok: true });
    sockets[0].emit({ event: 'error', chat_id: 'fresh-1', detail: 'spend limit reached', code: 'spend_limit_reached', limit });
    // kept like a failed model call: inline under the user message (the server stored it so), not as a banner
    expect(store.chatError()).toBeNull();
    const shown = store.messages().at(-1)?.error?.message ?? '';
    expect(store.messages().at(-1)?.error?.kind).toBe('spend_limit_reached');
    expect(shown).toContain('Refused: this would cross your daily limit for all models ($2.50 of $2.00 spent). It resets ');
    expect(shown).toContain('2026');
    // without a readable limit the server's detail stays
    sockets[0].emit({ event: 'error', detail: 'spend limit reached', code: 'spend_limit_reached' });
    expect(store.banner()).toBe('spend limit reached');
  });

  it('Scenario: a stale history response is discarded', async () => {
    await startWithSessions(['s1', 's2']);
    const first = http.expectOne('/api/sessions/s1/messages');
    store.open('s2');
    const second = http.expectOne('/api/sessions/s2/messages');
    second.flush({ chat_id: 's2', messages: [{ role: 'user', content: 'from s2' }] });
    first.flush({ chat_id: 's1', messages: [{ role: 'user', content: 'from s1' }] });
    await flushAsync();
    expect(store.activeChatId()).toBe('s2');
    expect(store.messages().map((message) => message.content)).toEqual(['from s2']);
    // reopening s1 loads it again
    store.open('s1');
    http.expectOne('/api/sessions/s1/messages').flush({ chat_id: 's1', messages: [{ role: 'user', content: 'from s1' }] });
    await flushAsync();
    expect(store.messages().map((message) => message.content)).toEqual(['from s1']);
  });

  it('Scenario: sending trims the content, carries the model and adds an optimistic message', async () => {
    await startWithSessions([]);
    sockets[0].open('c-new');
    expect(store.send('hello')).toEqual({ ok: false, error: 'composer.error.noModel' });
    store.selectModel({ provider: 'ollama', model: 'llama3' });
    expect(localStorage.getItem('cashcode.llm.selection')).toBe('{"provider":"ollama","model":"llama3"}');
    expect(store.send('   ')).toEqual({ ok: false, error: 'composer.error.empty' });
    expect(store.send('  hello \n')).toEqual({ ok: true });
    expect(sockets[0].sent.at(-1)).toEqual({
      type: 'message',
      chat_id: 'c-new',
      content: 'hello',
      metadata: { llm: { provider: 'ollama', model: 'llama3' } },
    });
    expect(store.messages().map((message) => [message.role, message.content])).toEqual([['user', 'hello']]);
    expect(store.generating()).toBe(true);
  });

  it('Scenario: chips are sent as mentioned_skills / selected_mcp_connectors and shown on the optimistic message', async () => {
    await startWithSessions([]);
    sockets[0].open('c-new');
    store.selectModel({ provider: 'ollama', model: 'llama3' });
    const selections = {
      skills: [{ name: 'weather', label: 'Weather' }],
      mcp: [{ server: 'test_stdio_mcp', label: 'Test stdio' }],
    };
    expect(store.send('forecast', selections)).toEqual({ ok: true });
    expect(sockets[0].sent.at(-1)).toEqual({
      type: 'message',
      chat_id: 'c-new',
      content: 'forecast',
      metadata: {
        llm: { provider: 'ollama', model: 'llama3' },
        mentioned_skills: [{ name: 'weather', label: 'Weather' }],
        selected_mcp_connectors: [{ server: 'test_stdio_mcp', label: 'Test stdio' }],
      },
    });
    expect(store.messages()[0].mentionedSkills).toEqual(selections.skills);
    expect(store.messages()[0].selectedMcpConnectors).toEqual(selections.mcp);
    // empty lists are omitted
    sockets[0].emit({ event: 'done', chat_id: 'c-new', duration_sec: 1, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, cancelled: false });
    http.expectOne('/api/sessions').flush({ sessions: [] });
    expect(store.send('plain', { skills: [], mcp: [] })).toEqual({ ok: true });
    expect(sockets[0].sent.at(-1)).toEqual({
      type: 'message',
      chat_id: 'c-new',
      content: 'plain',
      metadata: { llm: { provider: 'ollama', model: 'llama3' } },
    });
  });

  it('Scenario: a reopened chat shows its receipts and skill-loaded chips on the user row', async () => {
    await startWithSessions(['s1']);
    const hash = 'b'.repeat(64);
    http.expectOne('/api/sessions/s1/messages').flush({
      chat_id: 's1',
      messages: [
        {
          role: 'user',
          content: 'use it',
          mentioned_skills: [{ name: 'weather', label: 'Weather' }, { name: 'Bad Name' }],
          selected_mcp_connectors: [{ server: 'test_stdio_mcp' }],
          loaded_skills: [{ name: 'weather', version: 2, hash }],
        },
        { role: 'assistant', content: 'done' },
      ],
    });
    await flushAsync();
    const [user, answer] = store.messages();
    expect(user.mentionedSkills).toEqual([{ name: 'weather', label: 'Weather' }]);
    expect(user.selectedMcpConnectors).toEqual([{ server: 'test_stdio_mcp' }]);
    expect(user.loadedSkills).toEqual([{ name: 'weather', version: 2, hash }]);
    expect(store.messages()).toHaveLength(2);
    expect(answer.content).toBe('done');
  });

  it('Scenario: a message sent right after New chat goes to the new chat once its id arrives', async () => {
    await startWithSessions([]);
    sockets[0].open('c-first');
    store.selectModel({ provider: 'ollama', model: 'llama3' });
    expect(store.send('first question')).toEqual({ ok: true });
    sockets[0].emit({ event: 'done', chat_id: 'c-first', duration_sec: 1, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, cancelled: false });
    http.expectOne('/api/sessions').flush({ sessions: [{ chat_id: 'c-first', title: 'First', updated_at: '2026-01-01T10:00:00' }] });
    store.newChat();
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'new_chat' });
    // typed and sent before `attached`: held, nothing goes to the chat still shown
    expect(store.send('   ')).toEqual({ ok: false, error: 'composer.error.empty' });
    expect(store.send('for the new chat')).toEqual({ ok: true });
    expect(store.send('one more')).toEqual({ ok: false, error: 'composer.error.noChat' });
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'new_chat' });
    sockets[0].emit({ event: 'attached', chat_id: 'c-second' });
    expect(store.activeChatId()).toBe('c-second');
    expect(sockets[0].sent.at(-1)).toEqual({
      type: 'message',
      chat_id: 'c-second',
      content: 'for the new chat',
      metadata: { llm: { provider: 'ollama', model: 'llama3' } },
    });
    expect(store.messages().map((message) => [message.role, message.content])).toEqual([['user', 'for the new chat']]);
  });

  it('Scenario: attached opens the chat asked for with new_chat, and only that one (the re-attach answer arrives after New chat)', async () => {
    // the sequence a page load at `/` with saved sessions went through: the latest session opens with the list,
    // `ready` re-attaches it, New chat is pressed, and the answer to the re-attach arrives before the new chat's
    await startWithSessions(['old']);
    http.expectOne('/api/sessions/old/messages').flush({ chat_id: 'old', messages: [] });
    sockets[0].open('fresh');
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'attach', chat_id: 'old' });
    store.selectModel({ provider: 'ollama', model: 'llama3' });
    store.newChat();
    sockets[0].emit({ event: 'attached', chat_id: 'old', turn_active: false });
    expect(store.newChatPending()).toBe(true);
    expect(store.send('for the new chat')).toEqual({ ok: true });
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'new_chat' });
    sockets[0].emit({ event: 'attached', chat_id: 'brand-new' });
    expect(store.activeChatId()).toBe('brand-new');
    expect(sockets[0].sent.at(-1)).toMatchObject({ type: 'message', chat_id: 'brand-new', content: 'for the new chat' });
  });

  it('Scenario: New chat pressed before the socket is open opens the connection\'s fresh chat, not the latest session', async () => {
    await startWithSessions(['old']);
    // the latest session opened with the list; New chat is pressed before the socket is open
    http.expectOne('/api/sessions/old/messages').flush({ chat_id: 'old', messages: [] });
    store.newChat();
    sockets[0].open('fresh');
    expect(store.activeChatId()).toBe('fresh');
  });

  it('Scenario: nothing changes when the socket is not open', async () => {
    await startWithSessions([]);
    sockets[0].open('c-new');
    store.selectModel({ provider: 'ollama', model: 'llama3' });
    sockets[0].drop();
    expect(store.send('hello')).toEqual({ ok: false, error: 'composer.error.notConnected' });
    expect(store.messages()).toEqual([]);
    expect(store.generating()).toBe(false);
  });

  it('Scenario: the stop button sends cancel for the open chat', async () => {
    await startWithSessions([]);
    sockets[0].open('c-new');
    expect(store.stop()).toBe(true);
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'cancel', chat_id: 'c-new' });
  });

  it('Scenario: the remembered model is kept only while it is still listed', async () => {
    localStorage.setItem('cashcode.llm.selection', '{"provider":"ollama","model":"gone"}');
    const fresh = TestBed.inject(ChatStore);
    const loading = fresh.loadModels();
    http.expectOne('/api/settings/llm/models').flush({
      models: [
        { provider: 'openai_compatible', id: 'gpt-x' },
        { provider: 'ollama', id: 'llama3' },
      ],
      providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: true, error: 'timeout' } },
    });
    await loading;
    expect(fresh.selection()).toEqual({ provider: 'openai_compatible', model: 'gpt-x' });
    expect(localStorage.getItem('cashcode.llm.selection')).toBe('{"provider":"openai_compatible","model":"gpt-x"}');
    expect(fresh.providerErrors()).toEqual([{ provider: 'ollama', error: 'timeout' }]);
  });

  it('Scenario: rename and delete update the session list', async () => {
    await startWithSessions(['s1', 's2']);
    http.expectOne('/api/sessions/s1/messages').flush({ chat_id: 's1', messages: [] });
    sockets[0].open('fresh');
    const renaming = store.rename('s2', '  Trip plan  ');
    const patch = http.expectOne('/api/sessions/s2');
    expect(patch.request.method).toBe('PATCH');
    expect(patch.request.body).toEqual({ title: 'Trip plan' });
    patch.flush({ chat_id: 's2', title: 'Trip plan' });
    expect(await renaming).toBeNull();
    expect(store.sessions().find((session) => session.chat_id === 's2')?.title).toBe('Trip plan');

    const removing = store.remove('s1');
    const del = http.expectOne('/api/sessions/s1');
    expect(del.request.method).toBe('DELETE');
    del.flush(null, { status: 204, statusText: 'No Content' });
    await flushAsync();
    expect(store.activeChatId()).toBe('s2');
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'attach', chat_id: 's2' });
    http.expectOne('/api/sessions/s2/messages').flush({ chat_id: 's2', messages: [] });
    http.expectOne('/api/sessions').flush({ sessions: [{ chat_id: 's2', title: 'Trip plan', updated_at: '2026-01-02T10:00:00' }] });
    expect(await removing).toBeNull();
    expect(store.sessions().map((session) => session.chat_id)).toEqual(['s2']);
  });
  // ---- approvals -------------------------------------------------------------------------------------------

  const approvalRequest = (chat_id = 's1', call_id = 'call-1') => ({
    event: 'approval_request',
    chat_id,
    call_id,
    tool: 'exec',
    risk: 'exec',
    arguments: '{"command":"git push"}',
    expires_at: '2030-01-01T00:00:00Z',
    always_scope: { kind: 'exec_program', program: 'git' },
    sandboxed: true,
  });

  async function openChat(): Promise<void> {
    await startWithSessions(['s1', 's2']);
    http.expectOne('/api/sessions/s1/messages').flush({ chat_id: 's1', messages: [] });
    await flushAsync();
    sockets[0].open('fresh-1');
  }

  it('Scenario: a decision is sent as the approval frame and the card waits for approval_resolved', async () => {
    await openChat();
    sockets[0].emit(approvalRequest());
    expect(store.awaitingApproval().has('s1')).toBe(true);
    expect(store.decide('call-1', 'allow_always')).toBe(true);
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'approval', chat_id: 's1', call_id: 'call-1', decision: 'allow_always' });
    expect(store.messages().at(-1)?.tools[0].approval?.sent).toBe('allow_always');
    // a second click of another button sends nothing more for a settled call
    sockets[0].emit({ event: 'approval_resolved', chat_id: 's1', call_id: 'call-1', decision: 'allow_always', by: 'user' });
    const sent = sockets[0].sent.length;
    expect(store.decide('call-1', 'deny')).toBe(false);
    expect(sockets[0].sent).toHaveLength(sent);
    expect(store.awaitingApproval().size).toBe(0);
  });

  it('nothing is sent (and the card stays open) when the socket is not open', async () => {
    await openChat();
    sockets[0].emit(approvalRequest());
    sockets[0].drop();
    expect(store.decide('call-1', 'deny')).toBe(false);
    expect(store.messages().at(-1)?.tools[0].approval).toMatchObject({ sent: null, resolution: null });
  });

  it('Scenario: the sidebar marks a background chat that waits for an approval', async () => {
    await openChat();
    sockets[0].emit(approvalRequest('s2', 'call-2'));
    expect(store.activeChatId()).toBe('s1');
    expect([...store.awaitingApproval()]).toEqual(['s2']);
    expect(store.decide('call-2', 'deny')).toBe(true);
    expect(sockets[0].sent.at(-1)).toEqual({ type: 'approval', chat_id: 's2', call_id: 'call-2', decision: 'deny' });
  });

  describe('browser notifications', () => {
    let shown: { title: string; options: NotificationOptions }[];
    let visibility: DocumentVisibilityState;

    beforeEach(() => {
      shown = [];
      visibility = 'hidden';
      vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
    });

    afterEach(() => {
      vi.unstubAllGlobals();
      vi.restoreAllMocks();
    });

    function stubNotification(permission: NotificationPermission): void {
      class FakeNotification {
        static permission = permission;
        static requestPermission = vi.fn(() => Promise.resolve(permission));
        onclick: (() => void) | null = null;
        constructor(title: string, options: NotificationOptions) {
          shown.push({ title, options });
        }
        close(): void {}
      }
      vi.stubGlobal('Notification', FakeNotification);
    }

    it('Scenario: a new approval while the tab is hidden shows a notification once (only with permission)', async () => {
      stubNotification('granted');
      await openChat();
      sockets[0].emit(approvalRequest());
      sockets[0].emit(approvalRequest()); // re-sent on attach: no second notification
      expect(shown).toHaveLength(1);
      expect(shown[0].title).toBe('Approval needed: exec');
      expect(shown[0].options).toMatchObject({ tag: 'approval:call-1', body: 'S1: {"command":"git push"}' });
      visibility = 'visible';
      sockets[0].emit(approvalRequest('s1', 'call-3'));
      expect(shown).toHaveLength(1);
    });

    it('shows nothing without permission', async () => {
      stubNotification('default');
      await openChat();
      sockets[0].emit(approvalRequest());
      expect(shown).toHaveLength(0);
    });
  });
});
