/**
 * Tool policies and approvals through real turns: the fake model asks for `exec` (and other tools) over the WebSocket
 * gateway; the server asks with `approval_request`, the test answers with `approval` frames like a client, and marker
 * files in the workspace show whether a command ran. Also the REST side (policies, standing rules, audit log).
 */
import { existsSync, promises as fs, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, eventNamesCollapsed, WsTestClient } from './support/ws-client';

type EventOf<N extends ServerEvent['event']> = Extract<ServerEvent, { event: N }>;
interface CompletionBody {
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;
const toolMessages = (r: RecordedRequest | undefined) => bodyOf(r).messages.filter((m) => m.role === 'tool');
const exec = (id: string, command: string) => ({ id, name: 'exec', arguments: JSON.stringify({ command }) });

describe('approvals (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let chatCounter = 0;
  const newChatId = () => `approvals-chat-${++chatCounter}`;
  const marker = (name: string) => join(t.config.workspaceDir, name);

  /** Sends a message; resolves with the turn's events once `done` (or `error`) arrives. */
  function startTurn(chatId: string, content: string, via: WsTestClient = client): Promise<ServerEvent[]> {
    const before = via.chatEvents(chatId).length;
    const end = Promise.race([via.next('done', (e) => e.chat_id === chatId), via.next('error', (e) => e.chat_id === chatId)]);
    via.sendMessage(chatId, content);
    return end.then(() => via.chatEvents(chatId).slice(before));
  }

  function answer(chatId: string, callId: string, decision: string, via: WsTestClient = client): void {
    via.send({ type: 'approval', chat_id: chatId, call_id: callId, decision });
  }

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterEach(async () => {
    await client?.close();
  });

  it('Scenario: exec asks by default; deny → the command does not run, the model is told, the turn finishes', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [exec('x1', 'touch denied.txt')] }, { content: 'Understood.' });
    const turn = startTurn(chatId, 'make a file');
    const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId);
    expect(asked).toMatchObject({
      event: 'approval_request',
      chat_id: chatId,
      call_id: 'x1',
      tool: 'exec',
      risk: 'exec',
      // touch is not on the allowlist of program-wide rules: "always" means exactly this command
      always_scope: { kind: 'exec_command', argv: ['touch', 'denied.txt'] },
    });
    // the card says whether the command runs confined: the same answer the health probe gives
    const health = await request(t.httpUrl).get('/api/health').expect(200);
    expect(asked.sandboxed).toBe(health.body.exec_sandbox.active);
    expect(JSON.parse(asked.arguments)).toEqual({ command: 'touch denied.txt' });
    expect(Date.parse(asked.expires_at) - Date.now()).toBeGreaterThan(500_000);
    answer(chatId, 'x1', 'deny');
    const events = await turn;
    expect(existsSync(marker('denied.txt'))).toBe(false);
    expect(events.find((e) => e.event === 'approval_resolved')).toEqual({
      event: 'approval_resolved',
      chat_id: chatId,
      call_id: 'x1',
      decision: 'deny',
      by: 'user',
    });
    const result = events.find((e) => e.event === 'tool_result') as EventOf<'tool_result'>;
    expect(result).toMatchObject({ call_id: 'x1', ok: false });
    expect(eventNamesCollapsed(events)).toEqual([
      'session_updated',
      'tool_call',
      'approval_request',
      'approval_resolved',
      'tool_result',
      'delta',
      'stream_end',
      'done',
    ]);
    expect(toolMessages(fake.completions[1])[0]?.content).toMatch(/^The user denied running `touch denied.txt`\./);
  });

  it('Scenario: allow_once runs the command; the next identical call asks again', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [exec('o1', 'touch once.txt')] }, { content: 'done' });
    const first = startTurn(chatId, 'once');
    await client.waitFor('approval_request', (e) => e.call_id === 'o1');
    answer(chatId, 'o1', 'allow_once');
    const events = await first;
    expect(existsSync(marker('once.txt'))).toBe(true);
    expect(events.find((e) => e.event === 'tool_result')).toMatchObject({ call_id: 'o1', ok: true });

    fake.enqueue({ toolCalls: [exec('o2', 'touch once.txt')] }, { content: 'done' });
    const second = startTurn(chatId, 'again');
    await client.waitFor('approval_request', (e) => e.call_id === 'o2');
    answer(chatId, 'o2', 'deny');
    await second;
  });

  it('Scenario: allow_always stores an exact rule for git and a program rule for ls; covered lines run without asking, a compound line still asks; revoked → asks again', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [exec('a1', 'git --version > /dev/null && echo one')] }, { content: 'x' });
    // `echo` and `git` differ: no always scope for a line of two programs
    let turn = startTurn(chatId, 'two programs');
    const mixed = await client.waitFor('approval_request', (e) => e.call_id === 'a1');
    expect(mixed.always_scope).toBeUndefined();
    answer(chatId, 'a1', 'deny');
    await turn;

    fake.enqueue({ toolCalls: [exec('a2', 'git init -q repo && touch git-ok-1.txt')] }, { content: 'x' });
    turn = startTurn(chatId, 'init');
    const asked = await client.waitFor('approval_request', (e) => e.call_id === 'a2');
    expect(asked.always_scope).toBeUndefined();
    answer(chatId, 'a2', 'deny');
    await turn;

    // git can run any code through its options: "always" names the exact command
    fake.enqueue({ toolCalls: [exec('a3', 'git init -q repo')] }, { content: 'x' });
    turn = startTurn(chatId, 'init');
    const always = await client.waitFor('approval_request', (e) => e.call_id === 'a3');
    expect(always.always_scope).toEqual({ kind: 'exec_command', argv: ['git', 'init', '-q', 'repo'] });
    answer(chatId, 'a3', 'allow_always');
    let events = await turn;
    expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ decision: 'allow_always', by: 'user' });
    expect(existsSync(join(t.config.workspaceDir, 'repo', '.git'))).toBe(true);

    const policies = await request(t.httpUrl).get('/api/settings/tool-policies').expect(200);
    expect(policies.body.rules).toEqual([
      {
        id: expect.stringMatching(/^rule_[0-9a-f]{16}$/),
        scope: { kind: 'exec_command', argv: ['git', 'init', '-q', 'repo'] },
        created_at: expect.any(String),
      },
    ]);
    const ruleId = policies.body.rules[0].id as string;
    const file = join(t.dataDir, 'approvals', 'tool-policies.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await fs.readFile(file, 'utf8')).rules[0].id).toBe(ruleId);

    // covered: the same words (quoting and a descriptor copy aside) run without a request, announced by policy
    fake.enqueue({ toolCalls: [exec('a4', `'git' init -q "repo" 2>&1`)] }, { content: 'x' });
    events = await startTurn(chatId, 'again');
    expect(events.some((e) => e.event === 'approval_request')).toBe(false);
    expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'a4', decision: 'allow_once', by: 'policy' });
    expect(events.find((e) => e.event === 'tool_result')).toMatchObject({ call_id: 'a4', ok: true });

    // other arguments, and a compound line with another program, still ask
    for (const [id, line] of [
      ['a5', 'git -C repo status'],
      ['a5b', 'git init -q repo && touch sneaky.txt'],
    ] as const) {
      fake.enqueue({ toolCalls: [exec(id, line)] }, { content: 'x' });
      turn = startTurn(chatId, 'other');
      await client.waitFor('approval_request', (e) => e.call_id === id);
      answer(chatId, id, 'deny');
      await turn;
    }
    expect(existsSync(marker('sneaky.txt'))).toBe(false);

    // ls runs no other code: "always" covers it with any arguments
    fake.enqueue({ toolCalls: [exec('a6', 'ls -a')] }, { content: 'x' });
    turn = startTurn(chatId, 'ls');
    const lsAsked = await client.waitFor('approval_request', (e) => e.call_id === 'a6');
    expect(lsAsked.always_scope).toEqual({ kind: 'exec_program', program: 'ls' });
    answer(chatId, 'a6', 'allow_always');
    await turn;
    fake.enqueue({ toolCalls: [exec('a7', 'ls repo && ls -la 2>&1 >/dev/null')] }, { content: 'x' });
    events = await startTurn(chatId, 'ls again');
    expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'a7', decision: 'allow_once', by: 'policy' });

    // revoked → asks again
    await request(t.httpUrl).delete(`/api/settings/tool-policies/rules/${ruleId}`).expect(204);
    await request(t.httpUrl).delete(`/api/settings/tool-policies/rules/${ruleId}`).expect(404);
    fake.enqueue({ toolCalls: [exec('a8', 'git init -q repo')] }, { content: 'x' });
    turn = startTurn(chatId, 'init again');
    await client.waitFor('approval_request', (e) => e.call_id === 'a8');
    answer(chatId, 'a8', 'deny');
    await turn;
    const lsRule = (await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body.rules[0].id as string;
    await request(t.httpUrl).delete(`/api/settings/tool-policies/rules/${lsRule}`).expect(204);
  });

  it('Scenario: a pending request is re-sent to a client that attaches, which can answer it; all clients see the resolution', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [exec('r1', 'touch reattached.txt')] }, { content: 'ok' });
    const turn = startTurn(chatId, 'reattach');
    await client.waitFor('approval_request', (e) => e.call_id === 'r1');
    const second = await WsTestClient.connect(t.wsUrl);
    try {
      second.send({ type: 'attach', chat_id: chatId });
      const resent = await second.waitFor('approval_request', (e) => e.call_id === 'r1');
      expect(resent.tool).toBe('exec');
      answer(chatId, 'r1', 'allow_once', second);
      await turn;
      expect(existsSync(marker('reattached.txt'))).toBe(true);
      await second.waitFor('approval_resolved', (e) => e.call_id === 'r1');
      expect(client.ofType('approval_resolved').filter((e) => e.call_id === 'r1')).toHaveLength(1);
      // answering again: nothing is pending any more
      answer(chatId, 'r1', 'deny', second);
      expect(await second.next('error')).toMatchObject({ chat_id: chatId, code: 'unknown_approval' });
    } finally {
      await second.close();
    }
  });

  it('Scenario: bad approval frames get an error event with a code', async () => {
    const chatId = newChatId();
    answer(chatId, 'nope', 'allow_once');
    expect(await client.next('error')).toMatchObject({ chat_id: chatId, code: 'unknown_approval' });
    client.send({ type: 'approval', chat_id: chatId, call_id: 'x', decision: 'maybe' });
    expect(await client.next('error')).toMatchObject({ chat_id: chatId, code: 'invalid_frame' });
    client.send({ type: 'approval', chat_id: chatId, call_id: '', decision: 'deny' });
    expect(await client.next('error')).toMatchObject({ chat_id: chatId, code: 'invalid_frame' });
    client.send({ type: 'approval', chat_id: 'bad id!', call_id: 'x', decision: 'deny' });
    expect(await client.next('error')).toMatchObject({ code: 'invalid_chat_id' });
  });

  it('Scenario: cancelling the turn while a request is pending denies it by cancel', async () => {
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [exec('c1', 'touch cancelled.txt')] }, { content: 'never' });
    const turn = startTurn(chatId, 'cancel me');
    await client.waitFor('approval_request', (e) => e.call_id === 'c1');
    client.send({ type: 'stop', chat_id: chatId });
    const events = await turn;
    expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'c1', decision: 'deny', by: 'cancel' });
    expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: true });
    expect(existsSync(marker('cancelled.txt'))).toBe(false);
  });

  it('Scenario: read-only calls of the message complete while an exec waits for its answer', async () => {
    const chatId = newChatId();
    await fs.writeFile(marker('notes.txt'), 'hello\n');
    fake.enqueue(
      {
        toolCalls: [
          { id: 'p1', name: 'read_file', arguments: '{"path":"notes.txt"}' },
          { id: 'p2', name: 'list_dir', arguments: '{"path":"."}' },
          exec('p3', 'touch parallel.txt'),
        ],
      },
      { content: 'ok' },
    );
    const turn = startTurn(chatId, 'parallel');
    await client.waitFor('approval_request', (e) => e.call_id === 'p3');
    await client.waitFor('tool_result', (e) => e.call_id === 'p1');
    await client.waitFor('tool_result', (e) => e.call_id === 'p2');
    expect(client.ofType('tool_result').some((e) => e.call_id === 'p3')).toBe(false);
    answer(chatId, 'p3', 'allow_once');
    await turn;
    expect(existsSync(marker('parallel.txt'))).toBe(true);
    expect(toolMessages(fake.completions[1]).map((m) => m.tool_call_id)).toEqual(['p1', 'p2', 'p3']);
  });

  it('Scenario: a deny policy for web_fetch never runs it and announces the decision by policy', async () => {
    const put = await request(t.httpUrl)
      .put('/api/settings/tool-policies')
      .send({ tools: { web_fetch: 'deny' } })
      .expect(200);
    expect(put.body.tools).toEqual({ web_fetch: 'deny' });
    expect(put.body.known_tools.find((e: { name: string }) => e.name === 'web_fetch')).toMatchObject({
      risk: 'network',
      policy: 'deny',
      explicit: true,
    });
    try {
      const chatId = newChatId();
      fake.enqueue({ toolCalls: [{ id: 'w1', name: 'web_fetch', arguments: '{"url":"http://127.0.0.1:1/"}' }] }, { content: 'ok' });
      const events = await startTurn(chatId, 'fetch');
      expect(events.some((e) => e.event === 'approval_request')).toBe(false);
      expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'w1', decision: 'deny', by: 'policy' });
      expect(events.find((e) => e.event === 'tool_result')).toMatchObject({ call_id: 'w1', ok: false });
      expect(toolMessages(fake.completions[1])[0]?.content).toMatch(/^Policy denies the tool `web_fetch`/);
    } finally {
      await request(t.httpUrl).put('/api/settings/tool-policies').send({ tools: {} }).expect(200);
    }
  });

  it('Scenario: bad policy updates are 422 problem+json and change nothing', async () => {
    for (const body of [
      { defaults: { exec: 'sometimes' } },
      { defaults: { danger: 'allow' } },
      { tools: { 'bad name!': 'allow' } },
      { tools: [] },
      { servers: { 'Bad Server': 'deny' } },
      { keep_rule_ids: 'all' },
      { unknown: true },
    ]) {
      const response = await request(t.httpUrl).put('/api/settings/tool-policies').send(body).expect(422);
      expect(response.headers['content-type']).toContain('application/problem+json');
    }
    const policies = await request(t.httpUrl).get('/api/settings/tool-policies').expect(200);
    expect(policies.body.defaults).toEqual({ read: 'allow', write: 'allow', network: 'allow', exec: 'ask', mcp: 'ask', memory_write: 'ask', schedule_task: 'ask', browser_action: 'ask' });
    await request(t.httpUrl).get('/api/approvals/audit?limit=0').expect(422);
    await request(t.httpUrl).get('/api/approvals/audit?offset=-1').expect(422);
    await request(t.httpUrl).get('/api/approvals/audit?limit=abc').expect(422);
  });

  it('Scenario: the audit log lists every decision newest first, paged; the file is 0600', async () => {
    const all = await request(t.httpUrl).get('/api/approvals/audit?limit=500').expect(200);
    expect(all.body.total).toBeGreaterThanOrEqual(10);
    expect(all.body.entries[all.body.entries.length - 1]).toMatchObject({
      call_id: 'x1',
      tool: 'exec',
      risk: 'exec',
      decision: 'deny',
      by: 'user',
      preview: 'touch denied.txt',
    });
    const byCall = new Map<string, { decision: string; by: string }>(
      all.body.entries.map((e: { call_id: string; decision: string; by: string }) => [e.call_id, e]),
    );
    expect(byCall.get('a3')).toMatchObject({ decision: 'allow_always', by: 'user' });
    expect(byCall.get('a4')).toMatchObject({ decision: 'allow_once', by: 'policy' });
    expect(byCall.get('c1')).toMatchObject({ decision: 'deny', by: 'cancel' });
    expect(byCall.get('w1')).toMatchObject({ decision: 'deny', by: 'policy' });
    const page = await request(t.httpUrl).get('/api/approvals/audit?offset=1&limit=2').expect(200);
    expect(page.body).toMatchObject({ offset: 1, limit: 2, total: all.body.total });
    expect(page.body.entries).toEqual(all.body.entries.slice(1, 3));
    expect(statSync(join(t.dataDir, 'approvals', 'audit.jsonl')).mode & 0o777).toBe(0o600);
  });
});

describe('approvals: expiry (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_APPROVAL_TIMEOUT_SEC: '1' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });

  it('Scenario: an unanswered request expires and is denied by timeout', async () => {
    const chatId = 'expiry-chat';
    fake.enqueue({ toolCalls: [exec('t1', 'touch expired.txt')] }, { content: 'ok' });
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'wait');
    const asked = await client.waitFor('approval_request', (e) => e.call_id === 't1');
    expect(Date.parse(asked.expires_at) - Date.now()).toBeLessThanOrEqual(1000);
    expect(await client.waitFor('approval_resolved', (e) => e.call_id === 't1')).toMatchObject({ decision: 'deny', by: 'timeout' });
    await done;
    expect(existsSync(join(t.config.workspaceDir, 'expired.txt'))).toBe(false);
    expect((fake.completions[1]?.body as CompletionBody).messages.at(-1)?.content).toMatch(/within 1 s, so it was denied/);
  });
});

describe('approvals: MCP tools (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let catalogDir: string;

  function turnWithConnector(chatId: string, content: string): Promise<void> {
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({
      type: 'message',
      chat_id: chatId,
      content,
      metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' }, selected_mcp_connectors: [{ server: 'hello' }] },
    });
    return done.then(() => undefined);
  }

  beforeAll(async () => {
    ensureMcpServersBuilt();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-approvals-mcp-'));
    const catalog = writeCatalog(catalogDir, { hello: stdioEntry() });
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
    await fs.rm(catalogDir, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  it('Scenario: an MCP read-only tool runs without asking while a non-read-only one asks; always allow is per server and tool', async () => {
    const chatId = 'mcp-approvals-1';
    fake.enqueue(
      {
        toolCalls: [
          { id: 'm1', name: 'mcp_hello_say_hello', arguments: '{}' },
          { id: 'm2', name: 'mcp_hello_shout', arguments: '{"text":"hi"}' },
          { id: 'm3', name: 'mcp_hello_fail', arguments: '{"message":"boom"}' },
        ],
      },
      { content: 'ok' },
    );
    const turn = turnWithConnector(chatId, 'greet');
    const shout = await client.waitFor('approval_request', (e) => e.call_id === 'm2');
    expect(shout).toMatchObject({
      tool: 'mcp_hello_shout',
      risk: 'mcp',
      server: 'hello',
      destructive: false,
      always_scope: { kind: 'mcp_tool', server: 'hello', tool: 'shout' },
    });
    expect(shout.sandboxed).toBeUndefined();
    const fail = await client.waitFor('approval_request', (e) => e.call_id === 'm3');
    expect(fail).toMatchObject({ tool: 'mcp_hello_fail', destructive: true });
    // the read-only tool ran while both wait
    expect(await client.waitFor('tool_result', (e) => e.call_id === 'm1')).toMatchObject({ ok: true, result: 'Hello, Cash' });
    expect(client.ofType('approval_request').some((e) => e.call_id === 'm1')).toBe(false);
    client.send({ type: 'approval', chat_id: chatId, call_id: 'm2', decision: 'allow_always' });
    client.send({ type: 'approval', chat_id: chatId, call_id: 'm3', decision: 'deny' });
    await turn;
    expect(client.ofType('tool_result').find((e) => e.call_id === 'm2')).toMatchObject({ ok: true, result: expect.stringMatching(/^HI\n/) });
    expect(client.ofType('tool_result').find((e) => e.call_id === 'm3')).toMatchObject({ ok: false });

    const policies = await request(t.httpUrl).get('/api/settings/tool-policies').expect(200);
    expect(policies.body.rules.map((r: { scope: unknown }) => r.scope)).toEqual([{ kind: 'mcp_tool', server: 'hello', tool: 'shout' }]);
    const known = new Map(policies.body.known_tools.map((e: { name: string }) => [e.name, e]));
    expect(known.get('hello/say_hello')).toEqual({
      name: 'hello/say_hello',
      risk: 'read',
      policy: 'allow',
      explicit: false,
      server: 'hello',
      read_only: true,
      destructive: false,
      title: 'Say hello',
    });
    expect(known.get('hello/fail')).toMatchObject({ risk: 'mcp', policy: 'ask', destructive: true });
    expect(known.get('exec')).toMatchObject({ risk: 'exec', policy: 'ask' });
    expect(known.get('mcp_prepare')).toMatchObject({ risk: 'read', policy: 'allow' });

    // the rule: shout runs without asking next time
    fake.enqueue({ toolCalls: [{ id: 'm4', name: 'mcp_hello_shout', arguments: '{"text":"again"}' }] }, { content: 'ok' });
    await turnWithConnector(chatId, 'shout again');
    expect(client.ofType('approval_request').some((e) => e.call_id === 'm4')).toBe(false);
    expect(client.ofType('approval_resolved').find((e) => e.call_id === 'm4')).toMatchObject({ by: 'policy', decision: 'allow_once' });
  });

  it('Scenario: tool policy beats server policy beats the default; a server deny is not overridden by a standing rule', async () => {
    await request(t.httpUrl)
      .put('/api/settings/tool-policies')
      .send({ servers: { hello: 'deny' }, tools: { 'hello/say_hello': 'allow' } })
      .expect(200);
    try {
      const chatId = 'mcp-approvals-2';
      fake.enqueue(
        {
          toolCalls: [
            { id: 'd1', name: 'mcp_hello_say_hello', arguments: '{}' },
            { id: 'd2', name: 'mcp_hello_shout', arguments: '{"text":"no"}' },
          ],
        },
        { content: 'ok' },
      );
      await turnWithConnector(chatId, 'precedence');
      expect(client.ofType('tool_result').find((e) => e.call_id === 'd1')).toMatchObject({ ok: true });
      expect(client.ofType('approval_resolved').find((e) => e.call_id === 'd2')).toMatchObject({ decision: 'deny', by: 'policy' });
      expect(client.ofType('tool_result').find((e) => e.call_id === 'd2')).toMatchObject({ ok: false });
    } finally {
      await request(t.httpUrl).put('/api/settings/tool-policies').send({ servers: {}, tools: {} }).expect(200);
    }
  });

  it('Scenario: the REST tool listing and the schema cache keep title and annotations', async () => {
    const live = await request(t.httpUrl).get('/api/mcp/servers/hello/tools').expect(200);
    const byName = new Map(live.body.tools.map((tool: { original_name: string }) => [tool.original_name, tool]));
    expect(byName.get('say_hello')).toMatchObject({ title: 'Say hello', annotations: { readOnlyHint: true } });
    expect(byName.get('fail')).toMatchObject({ annotations: { destructiveHint: true, openWorldHint: false } });
    expect(byName.get('shout')).not.toHaveProperty('annotations');
    const cache = JSON.parse(await fs.readFile(join(t.config.mcpCacheDir, 'hello.json'), 'utf8')) as {
      tools: Array<{ name: string; title?: string; annotations?: unknown }>;
    };
    expect(cache.tools.find((tool) => tool.name === 'say_hello')).toMatchObject({ title: 'Say hello', annotations: { readOnlyHint: true } });
    await request(t.httpUrl).post('/api/mcp/servers/hello/disconnect').expect(200);
    const cached = await request(t.httpUrl).get('/api/mcp/servers/hello/tools').expect(200);
    expect(cached.body.source).toBe('cache');
    expect(cached.body.tools.find((tool: { original_name: string }) => tool.original_name === 'fail')).toMatchObject({
      annotations: { destructiveHint: true, openWorldHint: false },
    });
  });
});

describe('approvals: server shutdown (e2e)', () => {
  it('Scenario: stopping the server denies a pending request by cancel, and the audit log has it', async () => {
    const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-approvals-stop-'));
    const fake = await FakeModelServer.start();
    try {
      const t = await startTestApp({ dataDir });
      await configureFakeModel(t.httpUrl, fake.baseUrl);
      const client = await WsTestClient.connect(t.wsUrl);
      fake.enqueue({ toolCalls: [exec('s1', 'touch stopped.txt')] }, { content: 'never' });
      client.sendMessage('stop-chat', 'wait');
      await client.waitFor('approval_request', (e) => e.call_id === 's1');
      await t.close();
      await client.close();
      expect(existsSync(join(t.config.workspaceDir, 'stopped.txt'))).toBe(false);
      const lines = (await fs.readFile(join(dataDir, 'approvals', 'audit.jsonl'), 'utf8')).trim().split('\n');
      expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ call_id: 's1', decision: 'deny', by: 'cancel', preview: 'touch stopped.txt' });
    } finally {
      await fake.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
