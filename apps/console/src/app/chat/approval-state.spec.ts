import type { ApprovalRequestEvent, ServerEvent } from '@cashcode/contracts';

import {
  approvalArguments,
  approvalFromEvent,
  approvalOutcome,
  formatCountdown,
  scopeLabel,
  secondsLeft,
} from './approval-state';
import type { ChatState, ToolBlockState } from './chat-types';
import { historyLoaded } from './history-merge';
import { reduceServerEvent } from './server-events';
import { activateChat, approvalDecisionSent, chatsAwaitingApproval, connectionLost, userMessageSent } from './session-reducers';
import { INITIAL_CHAT_STATE } from './thread-updates';

const LLM = { llm: { provider: 'openai_compatible' as const, model: 'm1' } };

function apply(state: ChatState, ...events: ServerEvent[]): ChatState {
  return events.reduce(reduceServerEvent, state);
}

function generatingChat(chatId = 'c1'): ChatState {
  return userMessageSent(activateChat(INITIAL_CHAT_STATE, chatId, true), chatId, 'run git status', LLM);
}

const request = (overrides: Partial<ApprovalRequestEvent> = {}): ApprovalRequestEvent => ({
  event: 'approval_request',
  chat_id: 'c1',
  call_id: 'call-1',
  tool: 'exec',
  risk: 'exec',
  arguments: '{"command":"git status && git log --oneline | head -n 5"}',
  expires_at: '2026-07-26T12:05:00+08:00',
  always_scope: { kind: 'exec_program', program: 'git' },
  sandboxed: false,
  ...overrides,
});
const resolved = (decision: 'allow_once' | 'allow_always' | 'deny', by: 'user' | 'policy' | 'timeout' | 'cancel' = 'user', call_id = 'call-1'): ServerEvent => ({
  event: 'approval_resolved',
  chat_id: 'c1',
  call_id,
  decision,
  by,
});
const toolCall = (call_id = 'call-1'): ServerEvent => ({
  event: 'tool_call',
  chat_id: 'c1',
  tool_name: 'exec',
  stream_id: 3,
  call_id,
  arguments: '{"command":"git status && git log --oneline | head -n 5"}',
});
const toolResult = (ok: boolean, call_id = 'call-1'): ServerEvent => ({
  event: 'tool_result',
  chat_id: 'c1',
  tool_name: 'exec',
  result: ok ? 'On branch main' : 'denied by the user',
  stream_id: 3,
  call_id,
  ok,
  duration_ms: 40,
});
const done: ServerEvent = {
  event: 'done',
  chat_id: 'c1',
  duration_sec: 1,
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  cancelled: false,
};

function tools(state: ChatState, chatId = 'c1'): ToolBlockState[] {
  return state.threads[chatId].messages.flatMap((message) => message.tools);
}

describe('approval state', () => {
  it('a memory_write request keeps its named untrusted sources and the entry; malformed sources are dropped', () => {
    const state = approvalFromEvent(
      request({
        tool: 'save_memory',
        risk: 'memory_write',
        arguments: '{"content":"pay account 123"}',
        untrusted_sources: [{ kind: 'web_fetch', name: 'https://evil.test/' }, { kind: 'web_fetch' } as never],
        memory_entry: 'pay account 123',
      }),
    );
    expect(state.risk).toBe('memory_write');
    expect(state.untrustedSources).toEqual([{ kind: 'web_fetch', name: 'https://evil.test/' }]);
    expect(state.memoryEntry).toBe('pay account 123');
    expect(approvalFromEvent(request()).untrustedSources).toBeUndefined();
  });

  it('a browser_action request keeps the action, element and page; a malformed one has none', () => {
    const browser = { action: 'click', element: 'button "Send" [e3]', url: 'https://shop.test/', reason: 'form_submit' as const };
    const state = approvalFromEvent(request({ tool: 'browser', risk: 'browser_action', arguments: '{"action":"click","ref":"e3"}', browser }));
    expect(state.risk).toBe('browser_action');
    expect(state.browser).toEqual(browser);
    expect(approvalFromEvent(request({ browser: { action: 'click' } as never })).browser).toBeUndefined();
  });

  it('a schedule_task request keeps the proposed automation; a malformed one is dropped', () => {
    const automation = {
      name: 'Daily digest',
      prompt: 'Summarise the news.',
      schedule: { kind: 'interval' as const, every_seconds: 3600 },
      schedule_description: 'Every 1 hour',
      next: ['2026-12-05T07:00:00Z', 7],
      tools: null,
      mcp_servers: ['github'],
      skills: null,
    };
    const state = approvalFromEvent(request({ tool: 'schedule_task', risk: 'schedule_task', automation: automation as never }));
    expect(state.risk).toBe('schedule_task');
    expect(state.proposedAutomation).toEqual({ ...automation, next: ['2026-12-05T07:00:00Z'] });
    expect(approvalFromEvent(request({ risk: 'schedule_task', automation: { name: 3 } as never })).proposedAutomation).toBeUndefined();
  });

  it('Scenario: an approval request shows a card inline in the running turn', () => {
    const state = apply(generatingChat(), request());
    const messages = state.threads['c1'].messages;
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ role: 'assistant', streaming: true });
    expect(messages[1].tools).toHaveLength(1);
    expect(messages[1].tools[0]).toMatchObject({
      callId: 'call-1',
      status: 'awaiting',
      approval: {
        tool: 'exec',
        risk: 'exec',
        alwaysScope: { kind: 'exec_program', program: 'git' },
        sandboxed: false,
        sent: null,
        resolution: null,
      },
    });
    expect(chatsAwaitingApproval(state)).toEqual(['c1']);
  });

  it('Scenario: re-sent approval requests are deduplicated by call_id', () => {
    let state = apply(generatingChat(), request());
    state = approvalDecisionSent(state, 'c1', 'call-1', 'deny');
    state = apply(state, request(), request({ expires_at: '2026-07-26T12:06:00+08:00' }));
    expect(tools(state)).toHaveLength(1);
    // a repeat on the same connection keeps the decision already sent
    expect(tools(state)[0].approval).toMatchObject({ sent: 'deny', expiresAt: '2026-07-26T12:06:00+08:00' });
    // a settled card is never reopened by a late repeat
    state = apply(state, resolved('deny'), request());
    expect(tools(state)[0].approval?.resolution).toEqual({ decision: 'deny', by: 'user' });
    expect(chatsAwaitingApproval(state)).toEqual([]);
  });

  it('a request for a call whose tool_call came first reuses that block', () => {
    const state = apply(generatingChat(), toolCall(), request());
    expect(tools(state)).toHaveLength(1);
    expect(tools(state)[0]).toMatchObject({ status: 'awaiting', name: 'exec', approval: { callId: 'call-1' } });
  });

  it('Scenario: allow once runs the call; its tool_call and result land on the same block', () => {
    let state = apply(generatingChat(), request());
    state = apply(state, toolCall());
    expect(tools(state)[0].status).toBe('awaiting');
    state = apply(state, resolved('allow_once'));
    expect(tools(state)[0]).toMatchObject({ status: 'running', approval: { resolution: { decision: 'allow_once', by: 'user' } } });
    state = apply(state, toolResult(true));
    expect(tools(state)).toHaveLength(1);
    expect(tools(state)[0]).toMatchObject({ status: 'ok', result: 'On branch main' });
  });

  it('Scenario: a denied call never runs and stays "not run" even when its refusal comes back as a failed result', () => {
    const state = apply(generatingChat(), request(), resolved('deny'), toolResult(false));
    expect(tools(state)[0]).toMatchObject({ status: 'denied', result: 'denied by the user' });
    expect(approvalOutcome(tools(state)[0].approval!.resolution!)).toBe('deniedByUser');
  });

  it('Scenario: the card shows each outcome (allowed once, always allowed, denied by you, expired, cancelled)', () => {
    expect(approvalOutcome({ decision: 'allow_once', by: 'user' })).toBe('allowedOnce');
    expect(approvalOutcome({ decision: 'allow_always', by: 'user' })).toBe('allowedAlways');
    expect(approvalOutcome({ decision: 'deny', by: 'user' })).toBe('deniedByUser');
    expect(approvalOutcome({ decision: 'deny', by: 'timeout' })).toBe('expired');
    expect(approvalOutcome({ decision: 'deny', by: 'cancel' })).toBe('cancelled');
    expect(approvalOutcome({ decision: 'allow_once', by: 'policy' })).toBe('allowedByPolicy');
    expect(approvalOutcome({ decision: 'deny', by: 'policy' })).toBe('deniedByPolicy');
  });

  it('a turn that ends with an open card settles it as cancelled', () => {
    const state = apply(generatingChat(), request(), done);
    expect(tools(state)[0]).toMatchObject({ status: 'interrupted', approval: { resolution: { decision: 'deny', by: 'cancel' } } });
    expect(state.threads['c1'].generating).toBe(false);
    expect(chatsAwaitingApproval(state)).toEqual([]);
  });

  it('an approval request after a reload marks the chat as generating (a turn is running)', () => {
    const loaded = historyLoaded(activateChat(INITIAL_CHAT_STATE, 'c1'), 'c1', [{ role: 'user', content: 'hi' }] as never);
    expect(loaded.threads['c1'].generating).toBe(false);
    expect(apply(loaded, request()).threads['c1'].generating).toBe(true);
  });

  it('Scenario: open approvals survive a history load that answers after the server re-sent them', () => {
    const state = apply(activateChat(INITIAL_CHAT_STATE, 'c1'), request());
    const loaded = historyLoaded(state, 'c1', [
      { role: 'user', content: 'run git status' },
      { role: 'assistant', content: 'earlier answer' },
    ] as never);
    const messages = loaded.threads['c1'].messages;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(messages[2]).toMatchObject({ streaming: true, tools: [{ callId: 'call-1', status: 'awaiting' }] });
    expect(new Set(messages.map((message) => message.id)).size).toBe(3);
    // and a settled one does not come back
    const settled = historyLoaded(apply(state, resolved('allow_once')), 'c1', [] as never);
    expect(settled.threads['c1'].messages).toEqual([]);
  });

  it('a dropped connection forgets decisions sent on it, so the card can be answered again', () => {
    let state = apply(generatingChat(), request());
    state = approvalDecisionSent(state, 'c1', 'call-1', 'allow_once');
    expect(tools(state)[0].approval?.sent).toBe('allow_once');
    state = connectionLost(state);
    expect(tools(state)[0].approval?.sent).toBeNull();
    expect(state.threads['c1'].resync).toBe(true);
  });

  it('Scenario: the sidebar marks every chat waiting for an approval, including chats in the background', () => {
    let state = apply(generatingChat('c1'), request());
    state = apply(state, request({ chat_id: 'c2', call_id: 'call-9' }));
    expect(chatsAwaitingApproval(state).sort()).toEqual(['c1', 'c2']);
    state = apply(state, resolved('allow_once'));
    expect(chatsAwaitingApproval(state)).toEqual(['c2']);
  });

  it('a resolution for an unknown call changes nothing', () => {
    const state = apply(generatingChat(), request());
    expect(apply(state, resolved('deny', 'user', 'other'))).toBe(state);
  });

  it('formats the countdown and the rule scope, and shows an exec command as plain text', () => {
    const now = Date.parse('2026-07-26T12:00:00+08:00');
    expect(secondsLeft('2026-07-26T12:05:00+08:00', now)).toBe(300);
    expect(secondsLeft('2026-07-26T11:00:00+08:00', now)).toBe(0);
    expect(secondsLeft('not a time', now)).toBeNull();
    expect(formatCountdown(300)).toBe('5:00');
    expect(formatCountdown(9)).toBe('0:09');
    expect(formatCountdown(3723)).toBe('1:02:03');
    expect(scopeLabel({ kind: 'exec_program', program: 'git' })).toBe('git');
    expect(scopeLabel({ kind: 'exec_command', argv: ['git', 'commit', '-m', "it's"] })).toBe(`git commit -m 'it'\\''s'`);
    expect(scopeLabel({ kind: 'mcp_tool', server: 'github', tool: 'create_issue' })).toBe('github/create_issue');
    expect(approvalArguments({ risk: 'exec', arguments: '{"command":"rm -rf build"}' })).toEqual({ command: true, text: 'rm -rf build' });
    expect(approvalArguments({ risk: 'write', arguments: '{"path":"a.md","content":"x"}' })).toEqual({
      command: false,
      text: '{\n  "path": "a.md",\n  "content": "x"\n}',
    });
  });

  it('a refused approval frame shows its error without ending the turn, and the card can be answered again', () => {
    let state = approvalDecisionSent(apply(generatingChat(), request()), 'c1', 'call-1', 'allow_once');
    state = apply(state, { event: 'error', chat_id: 'c1', detail: 'The approval could not be applied; answer again.', code: 'approval_failed' });
    expect(state.threads['c1']).toMatchObject({ generating: true, error: 'The approval could not be applied; answer again.' });
    expect(tools(state)[0]).toMatchObject({ status: 'awaiting', approval: { sent: null, resolution: null } });
  });

  it('keeps the exact command and its command spans from the request, and drops spans that do not fit the command', () => {
    const command = 'ls ; id';
    const spans = [
      { program: 'ls', start: 0, end: 2 },
      { program: 'id', start: 5, end: 7 },
    ];
    const state = approvalFromEvent(request({ arguments: JSON.stringify({ command }), command, commands: spans, unanalysed: undefined }));
    expect(state.command).toBe(command);
    expect(state.commands).toEqual(spans);
    expect(state.unanalysed).toBeNull();
    expect(approvalArguments(state)).toEqual({ command: true, text: command });
    for (const bad of [
      [{ program: 'id', start: 5, end: 9 }],
      [{ program: 'ls', start: 3, end: 2 }],
      [spans[1], spans[0]],
      [{ program: 'ls', start: '0', end: 2 }],
    ]) {
      expect(approvalFromEvent(request({ command, commands: bad as never })).commands).toBeNull();
    }
    expect(approvalFromEvent(request({ command, unanalysed: 'comment' })).unanalysed).toBe('comment');
  });

  it('Scenario: the card offers an exact command rule with its words', () => {
    const exact = approvalFromEvent(request({ always_scope: { kind: 'exec_command', argv: ['git', 'status'] } }));
    expect(exact.alwaysScope).toEqual({ kind: 'exec_command', argv: ['git', 'status'] });
    expect(scopeLabel(exact.alwaysScope!)).toBe('git status');
    for (const bad of [{ kind: 'exec_command', argv: [] }, { kind: 'exec_command', argv: 'git status' }, { kind: 'exec_command', argv: ['git', 1] }]) {
      expect(approvalFromEvent(request({ always_scope: bad as never })).alwaysScope).toBeNull();
    }
  });
});
