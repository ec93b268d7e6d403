import type { ServerEvent } from '@cashcode/contracts';

import type { ChatState } from './chat-types';
import { historyLoaded, toolBlockFromRecord } from './history-merge';
import { reduceServerEvent } from './server-events';
import { activateChat, chatsToReattach, connectionLost, elicitationAnswerSent, sessionRemoved, newChatRequested, sessionsLoaded, userMessageSent } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const LLM = { llm: { provider: 'openai_compatible' as const, model: 'm1' } };

function apply(state: ChatState, ...events: ServerEvent[]): ChatState {
  return events.reduce(reduceServerEvent, state);
}

/** An open, loaded chat "c1" with one user message sent. */
function generatingChat(): ChatState {
  const state = activateChat(INITIAL_CHAT_STATE, 'c1', true);
  return userMessageSent(state, 'c1', 'hello', LLM);
}

const toolCall = (call_id: string, tool_name = 'read_file', args = '{"path":"a.md"}'): ServerEvent => ({
  event: 'tool_call',
  chat_id: 'c1',
  tool_name,
  stream_id: 7,
  call_id,
  arguments: args,
});
const toolResult = (call_id: string, result: string, ok = true, tool_name = 'read_file'): ServerEvent => ({
  event: 'tool_result',
  chat_id: 'c1',
  tool_name,
  result,
  stream_id: 7,
  call_id,
  ok,
  duration_ms: 12,
});
const delta = (text: string, chat_id = 'c1'): ServerEvent => ({ event: 'delta', chat_id, text, stream_id: 7 });
const done = (cancelled = false): ServerEvent => ({
  event: 'done',
  chat_id: 'c1',
  duration_sec: 1.2,
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  cancelled,
});

describe('chat state', () => {
  it('Scenario: tool_progress updates the running call and an elicitation form opens, is answered and resolves', () => {
    let state = apply(
      generatingChat(),
      toolCall('call-p', 'mcp_s_long'),
      { event: 'tool_progress', chat_id: 'c1', call_id: 'call-p', tool_name: 'mcp_s_long', stream_id: 7, progress: 2, total: 3, message: 'step 2' },
      {
        event: 'elicitation_request',
        chat_id: 'c1',
        elicitation_id: 'e1',
        call_id: 'call-p',
        tool_name: 'mcp_s_long',
        server: 's',
        message: 'Name?',
        requested_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        timeout_sec: 600,
      },
    );
    let tool = state.threads['c1'].messages[1]!.tools[0]!;
    expect(tool.progress).toEqual({ progress: 2, total: 3, message: 'step 2' });
    expect(tool.elicitation).toMatchObject({ id: 'e1', status: 'open', fields: [{ name: 'name', required: true }] });
    state = elicitationAnswerSent(state, 'c1', 'e1');
    expect(state.threads['c1'].messages[1]!.tools[0]!.elicitation?.status).toBe('sent');
    // a refused answer reopens the form without ending the turn
    state = apply(state, { event: 'error', chat_id: 'c1', detail: 'The answer does not fit the form: name is required.', code: 'invalid_elicitation' });
    expect(state.threads['c1'].generating).toBe(true);
    expect(state.threads['c1'].messages[1]!.tools[0]!.elicitation?.status).toBe('open');
    state = apply(state, { event: 'elicitation_resolved', chat_id: 'c1', elicitation_id: 'e1', action: 'accept' });
    tool = state.threads['c1'].messages[1]!.tools[0]!;
    expect(tool.elicitation?.status).toBe('accept');
  });

  it('Scenario: deltas stream into one assistant message', () => {
    const state = apply(generatingChat(), delta('Hel'), delta('lo '), delta('world'));
    const messages = state.threads['c1'].messages;
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ role: 'assistant', content: 'Hello world', streaming: true });
    expect(state.threads['c1'].generating).toBe(true);
  });

  it('Scenario: stream_end and done finish the answer and clear generating', () => {
    const ended = apply(generatingChat(), delta('Hi'), { event: 'stream_end', chat_id: 'c1', stream_id: 7 });
    expect(ended.threads['c1'].messages[1].streaming).toBe(false);
    expect(ended.threads['c1'].generating).toBe(true);
    const finished = reduceServerEvent(ended, done());
    expect(finished.threads['c1'].generating).toBe(false);
    expect(finished.threads['c1'].messages[1]).toMatchObject({ content: 'Hi', cancelled: false });
  });

  it('Scenario: a delta after a finished answer starts a new assistant message', () => {
    const state = apply(generatingChat(), delta('first'), { event: 'stream_end', chat_id: 'c1', stream_id: 7 }, delta('second'));
    const contents = state.threads['c1'].messages.map((message) => message.content);
    expect(contents).toEqual(['hello', 'first', 'second']);
  });

  it('Scenario: tool blocks are keyed by call_id (two calls of one tool in one turn)', () => {
    let state = apply(generatingChat(), toolCall('call-a'), toolCall('call-b', 'read_file', '{"path":"b.md"}'));
    let tools = state.threads['c1'].messages[1].tools;
    expect(tools.map((tool) => [tool.callId, tool.status])).toEqual([
      ['call-a', 'running'],
      ['call-b', 'running'],
    ]);
    // results arrive out of order: only the matching block completes
    state = reduceServerEvent(state, toolResult('call-b', 'contents of b'));
    tools = state.threads['c1'].messages[1].tools;
    expect(tools[0]).toMatchObject({ callId: 'call-a', status: 'running', result: null });
    expect(tools[1]).toMatchObject({ callId: 'call-b', status: 'ok', result: 'contents of b', durationMs: 12 });
    state = reduceServerEvent(state, toolResult('call-a', 'boom', false));
    tools = state.threads['c1'].messages[1].tools;
    expect(tools[0]).toMatchObject({ status: 'error', result: 'boom' });
    expect(tools[0].arguments).toBe('{"path":"a.md"}');
  });

  it('Scenario: tools and the final answer share one assistant message', () => {
    const state = apply(generatingChat(), toolCall('c-1'), toolResult('c-1', 'ok'), delta('Done.'));
    const messages = state.threads['c1'].messages;
    expect(messages).toHaveLength(2);
    expect(messages[1].tools).toHaveLength(1);
    expect(messages[1].content).toBe('Done.');
  });

  it('matches a result without call_id (reference server) to the first running block of that tool', () => {
    const legacyCall = (name: string): ServerEvent =>
      ({ event: 'tool_call', chat_id: 'c1', tool_name: name, stream_id: 7 }) as unknown as ServerEvent;
    const legacyResult = (name: string, result: string): ServerEvent =>
      ({ event: 'tool_result', chat_id: 'c1', tool_name: name, stream_id: 7, result }) as unknown as ServerEvent;
    const state = apply(generatingChat(), legacyCall('glob'), legacyCall('grep'), legacyResult('grep', 'found'));
    const tools = state.threads['c1'].messages[1].tools;
    expect(tools.map((tool) => [tool.name, tool.status])).toEqual([
      ['glob', 'running'],
      ['grep', 'ok'],
    ]);
    expect(new Set(tools.map((tool) => tool.callId)).size).toBe(2);
  });

  it('shows a result whose call event was missed as a finished block', () => {
    const state = apply(generatingChat(), toolResult('lost', 'late result'));
    expect(state.threads['c1'].messages[1].tools[0]).toMatchObject({ callId: 'lost', status: 'ok', result: 'late result' });
  });

  it('Scenario: a cancelled turn keeps the partial text and is marked stopped', () => {
    const state = apply(generatingChat(), toolCall('t1'), delta('Partial ans'), done(true));
    const thread = state.threads['c1'];
    expect(thread.generating).toBe(false);
    expect(thread.messages[1]).toMatchObject({ content: 'Partial ans', streaming: false, cancelled: true });
    expect(thread.messages[1].tools[0].status).toBe('interrupted');
  });

  it('a turn cancelled before any output shows a stopped marker', () => {
    const state = apply(generatingChat(), done(true));
    expect(state.threads['c1'].messages.at(-1)).toMatchObject({ role: 'assistant', content: '', cancelled: true });
  });

  it('Scenario: a turn error shows inline and clears only that chat', () => {
    let state = generatingChat();
    state = userMessageSent(activateChat(state, 'c2', true), 'c2', 'other', LLM);
    state = activateChat(state, 'c1');
    state = reduceServerEvent(state, { event: 'error', chat_id: 'c1', detail: 'rate limited' });
    expect(state.threads['c1']).toMatchObject({ generating: false, error: 'rate limited' });
    expect(state.threads['c2'].generating).toBe(true);
    expect(state.banner).toBeNull();
  });

  it('Scenario: a warning marks the turn\'s user message and the turn keeps running', () => {
    const warning: ServerEvent = {
      event: 'warning',
      chat_id: 'c1',
      subject: 'skill',
      name: 'github',
      code: 'missing_dependency',
      detail: 'Unable to load @github: …',
    };
    const state = apply(generatingChat(), warning, warning, delta('Answer'));
    const [user, assistant] = state.threads['c1'].messages;
    expect(user.warnings).toEqual([{ subject: 'skill', name: 'github', code: 'missing_dependency', detail: 'Unable to load @github: …' }]);
    expect(assistant.content).toBe('Answer');
    expect(state.threads['c1'].generating).toBe(true);
    expect(state.threads['c1'].error).toBeNull();
  });

  it('an error without chat_id becomes the banner and clears the open chat', () => {
    const state = reduceServerEvent(generatingChat(), { event: 'error', detail: 'typed JSON envelope required' });
    expect(state.banner).toBe('typed JSON envelope required');
    expect(state.threads['c1'].generating).toBe(false);
  });

  it('Scenario: ready opens its chat only when none is open', () => {
    const fresh = reduceServerEvent(INITIAL_CHAT_STATE, { event: 'ready', chat_id: 'r1', client_id: 'client-1' });
    expect(fresh.activeChatId).toBe('r1');
    expect(fresh.threads['r1'].history).toBe('loaded');
    const busy = reduceServerEvent(generatingChat(), { event: 'ready', chat_id: 'r2', client_id: 'client-2' });
    expect(busy.activeChatId).toBe('c1');
  });

  it('Scenario: New chat pressed before the socket is open opens the connection\'s fresh chat, not the latest session', () => {
    let state = newChatRequested(INITIAL_CHAT_STATE);
    state = sessionsLoaded(state, [{ chat_id: 'a', title: 'A', updated_at: '2026-01-01T10:00:00' }]);
    state = reduceServerEvent(state, { event: 'ready', chat_id: 'r1', client_id: 'client-1' });
    expect(state.activeChatId).toBe('r1');
    expect(state.pendingNewChat).toBe(false);
    expect(state.threads['r1'].history).toBe('loaded');
    // with a chat already open, a pending New chat still wins over it
    const busy = reduceServerEvent(newChatRequested(generatingChat()), { event: 'ready', chat_id: 'r2', client_id: 'client-2' });
    expect(busy.activeChatId).toBe('r2');
  });

  it('Scenario: attached opens the chat asked for with new_chat, and only that one', () => {
    const pending = { ...generatingChat(), pendingNewChat: true };
    const opened = reduceServerEvent(pending, { event: 'attached', chat_id: 'n1' });
    expect(opened.activeChatId).toBe('n1');
    expect(opened.pendingNewChat).toBe(false);
    const reattached = reduceServerEvent(opened, { event: 'attached', chat_id: 'c1' });
    expect(reattached.activeChatId).toBe('n1');
    // the answer to a re-attach that arrives while New chat waits (the page opened the latest session, `ready` re-
    // attached it, then New chat was pressed) is not the new chat: it waits on
    const waiting = reduceServerEvent(pending, { event: 'attached', chat_id: 'c1', turn_active: false });
    expect(waiting.activeChatId).toBe('c1');
    expect(waiting.pendingNewChat).toBe(true);
    const newOne = reduceServerEvent(waiting, { event: 'attached', chat_id: 'n2' });
    expect(newOne).toMatchObject({ activeChatId: 'n2', pendingNewChat: false });
  });

  it('Scenario: re-attaching after a reconnect ends a turn that finished offline', () => {
    let state = apply(generatingChat(), delta('half'));
    state = connectionLost(state);
    expect(state.threads['c1'].resync).toBe(true);
    expect(chatsToReattach(state)).toEqual(['c1']);
    const stillRunning = reduceServerEvent(state, { event: 'attached', chat_id: 'c1', turn_active: true });
    expect(stillRunning.threads['c1'].generating).toBe(true);
    const ended = reduceServerEvent(state, { event: 'attached', chat_id: 'c1', turn_active: false });
    expect(ended.threads['c1']).toMatchObject({ generating: false, resync: true });
  });

  it('chats to re-attach: the open chat and every generating chat', () => {
    let state = generatingChat();
    state = activateChat(state, 'c2', true);
    expect(chatsToReattach(state).sort()).toEqual(['c1', 'c2']);
  });

  it('Scenario: session_updated upserts the session at the top', () => {
    let state = sessionsLoaded(INITIAL_CHAT_STATE, [
      { chat_id: 'a', title: 'A', updated_at: '2026-01-01T10:00:00' },
      { chat_id: 'b', title: 'B', updated_at: '2026-01-01T09:00:00' },
    ]);
    state = reduceServerEvent(state, {
      event: 'session_updated',
      chat_id: 'b',
      title: 'Renamed B',
      updated_at: '2026-01-01T11:00:00+08:00',
    });
    expect(state.sessions.map((session) => [session.chat_id, session.title])).toEqual([
      ['b', 'Renamed B'],
      ['a', 'A'],
    ]);
  });

  it('Scenario: sessions load opens the first session when nothing is open', () => {
    const state = sessionsLoaded(INITIAL_CHAT_STATE, [{ chat_id: 'a', title: 'A', updated_at: '2026-01-01T10:00:00' }]);
    expect(state.activeChatId).toBe('a');
    expect(state.threads['a'].history).toBe('idle');
  });

  it('Scenario: a session list that arrives after New chat does not open another chat', () => {
    const state = sessionsLoaded(newChatRequested(INITIAL_CHAT_STATE), [{ chat_id: 'a', title: 'A', updated_at: '2026-01-01T10:00:00' }]);
    expect(state.activeChatId).toBeNull();
    expect(state.pendingNewChat).toBe(true);
    expect(state.sessions.map((session) => session.chat_id)).toEqual(['a']);
  });

  it('Scenario: deleting the open session opens the first remaining one', () => {
    let state = sessionsLoaded(INITIAL_CHAT_STATE, [
      { chat_id: 'a', title: 'A', updated_at: '2026-01-01T10:00:00' },
      { chat_id: 'b', title: 'B', updated_at: '2026-01-01T09:00:00' },
    ]);
    state = sessionRemoved(state, 'a');
    expect(state.activeChatId).toBe('b');
    expect(state.threads['a']).toBeUndefined();
    expect(sessionRemoved(state, 'b').activeChatId).toBeNull();
  });

  it('history replaces the local messages and keeps valid receipts only', () => {
    const state = historyLoaded(generatingChat(), 'c1', [
      { role: 'user', content: 'q', mentioned_skills: [{ name: 'weather', label: 'Weather' }] },
      { role: 'assistant', content: 'a' },
    ]);
    const messages = state.threads['c1'].messages;
    expect(messages.map((message) => message.content)).toEqual(['q', 'a']);
    expect(messages[0].mentionedSkills).toEqual([{ name: 'weather', label: 'Weather' }]);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
  });

  it('a model error on an unanswered prompt is shown under it instead of a banner', () => {
    const state = reduceServerEvent(generatingChat(), {
      event: 'error',
      chat_id: 'c1',
      detail: 'Authentication failed: check the API key.',
      code: 'auth',
    });
    expect(state.threads['c1']).toMatchObject({ generating: false, error: null });
    expect(state.threads['c1'].messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'hello',
      error: { kind: 'auth', message: 'Authentication failed: check the API key.' },
    });
  });

  it('loaded history keeps a failed prompt marker and turns persisted tool calls into tool blocks', () => {
    const state = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', [
      { role: 'user', content: 'q', error: { kind: 'rate_limit', message: 'Slow down.' } },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: 'a',
        tools: [
          { call_id: 't1', name: 'list_dir', arguments: '{}', result_preview: 'a.txt', ok: true, duration_ms: 12 },
          { call_id: 't2', name: 'read_file', arguments: '{}', result_preview: 'missing', ok: false, duration_ms: 3 },
          { call_id: 't3', name: 'exec', arguments: '{}', result_preview: null, ok: null, duration_ms: null },
        ],
      },
    ]);
    const messages = state.threads['c1'].messages;
    expect(messages[0].error).toEqual({ kind: 'rate_limit', message: 'Slow down.' });
    expect(messages[1].error).toBeUndefined();
    expect(messages[2].tools.map((tool) => [tool.callId, tool.status, tool.durationMs, tool.result])).toEqual([
      ['t1', 'ok', 12, 'a.txt'],
      ['t2', 'error', 3, 'missing'],
      ['t3', 'interrupted', null, null],
    ]);
  });

  it('Scenario: a failed tool call reads as Failed after a reload, also from a record without ok', () => {
    const record = { call_id: 'x', name: 'mcp_kit_fail', arguments: '{}', duration_ms: 5 };
    expect(toolBlockFromRecord({ ...record, result_preview: 'the disk is full', ok: false }).status).toBe('error');
    expect(toolBlockFromRecord({ ...record, result_preview: 'Error: nope', ok: null }).status).toBe('error');
    expect(toolBlockFromRecord({ ...record, result_preview: 'all good', ok: null }).status).toBe('ok');
    expect(toolBlockFromRecord({ ...record, result_preview: 'Error handling explained', ok: true }).status).toBe('ok');
    expect(toolBlockFromRecord({ ...record, result_preview: null, ok: null }).status).toBe('interrupted');
  });
});
