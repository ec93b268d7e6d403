/**
 * Where the channels meet automations and the approval rails (openspec channels, approvals): a run's answer delivered
 * to an approved sender's Telegram conversation (and never to a revoked one), approvals of turns no console answers
 * sent to the owner on Telegram, and a group member's turn that cannot use the owner's `allow` policies. Against the
 * local Bot API stand-in and the fake model.
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Automation, AutomationRun } from '@cashcode/contracts';
import { automationBody, waitForRuns } from './support/automations';
import { FakeModelServer } from './support/fake-model-server';
import { FakeTelegramServer, type StoredMessage } from './support/fake-telegram-server';
import { api, botMessages, OWNER, pairOwner, settled, startTelegramApp, waitFor } from './support/telegram-harness';
import type { TestApp } from './support/test-app';
import { WsTestClient } from './support/ws-client';

const GROUP = { id: -100888, type: 'supergroup' as const, title: 'Neighbours' };
const CAROL = { id: 7474, first_name: 'Carol' };
const buttonsOf = (message: StoredMessage) => message.reply_markup?.inline_keyboard[0] ?? [];
const ended = (runs: AutomationRun[]) => runs.filter((run) => run.outcome !== 'running');

describe('Channels × automations and approvals (e2e)', () => {
  let fake: FakeModelServer;
  let tg: FakeTelegramServer;
  let t: TestApp;
  let dataDir: string;
  let configDir: string;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    tg = await FakeTelegramServer.start();
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-tga-data-'));
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-tga-config-'));
    t = await startTelegramApp(tg, fake, { dataDir, configDir });
    await pairOwner(t, tg);
  });
  afterAll(async () => {
    await t?.close();
    await tg?.close();
    await fake?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(configDir, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  async function createAutomation(overrides: Record<string, unknown>): Promise<Automation> {
    const created = await api<Automation>(t, 'POST', '/api/automations', automationBody(overrides));
    expect(created.status).toBe(201);
    return created.body;
  }

  async function callbackAnswer(updateId: number): Promise<string | undefined> {
    const call = await tg.waitForCall((c) => c.method === 'answerCallbackQuery' && c.params['callback_query_id'] === `cbq-${updateId}`);
    return call.params['text'] as string | undefined;
  }

  it("Scenario: An automation's run is delivered to an approved sender's conversation", async () => {
    const automation = await createAutomation({ name: 'Digest', delivery: { channel: { kind: 'telegram', chat_id: String(OWNER.id) } } });
    // Markdown symbols and HTML that must arrive escaped, and more than one message's worth of text
    const answer = `Total <b>& *stars*\n\n${'word '.repeat(1_000)}end`;
    fake.enqueue({ content: answer });
    const before = tg.messagesIn(OWNER.id).length;
    expect((await api(t, 'POST', `/api/automations/${automation.id}/run`)).status).toBe(202);
    const runs = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 1);
    expect(runs[0]).toMatchObject({ outcome: 'ok', error: null });
    const sent = await botMessages(tg, OWNER.id, 2, before);
    for (const message of sent) expect(message.text.length).toBeLessThanOrEqual(4_096);
    const shown = sent.map((message) => FakeTelegramServer.visible(message)).join('\n');
    // rendered like a channel answer: the name in bold, Markdown applied, the model's HTML shown as text
    expect(shown.startsWith('Digest\n\nTotal <b>& stars')).toBe(true);
    expect(sent[0]!.text).toContain('<b>Digest</b>');
    expect(sent[0]!.text).toContain('Total &lt;b&gt;&amp; <i>stars</i>');
    expect(shown.replace(/\s+/g, ' ')).toContain('word word');
    expect(shown.endsWith('end')).toBe(true);

    // an error outcome is delivered in one line
    fake.enqueue({ status: 401 });
    const from = tg.messagesIn(OWNER.id).length;
    expect((await api(t, 'POST', `/api/automations/${automation.id}/run`)).status).toBe(202);
    await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 2);
    const [line] = await botMessages(tg, OWNER.id, 1, from);
    expect(FakeTelegramServer.visible(line!)).toMatch(/^Digest: ⚠️ the run ended error — [^\n]+$/);
    // both runs are counted in the metrics by outcome
    const metrics = await (await fetch(`${t.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/^cashcode_automation_runs_total\{outcome="ok",trigger="manual"\} [1-9]/m);
    expect(metrics).toMatch(/^cashcode_automation_runs_total\{outcome="error",trigger="manual"\} [1-9]/m);
  });

  it('Scenario: A delivery target that is not an approved sender is refused', async () => {
    for (const chat_id of ['999999', '@somebody']) {
      const refused = await api<{ code: string; errors: Array<{ field: string; message: string }> }>(
        t,
        'POST',
        '/api/automations',
        automationBody({ delivery: { channel: { kind: 'telegram', chat_id } } }),
      );
      expect([refused.status, refused.body.code, refused.body.errors[0]?.field]).toEqual([422, 'invalid_delivery', 'delivery.channel']);
      expect(refused.body.errors[0]?.message).toContain('is not an approved sender');
    }
  });

  it('Scenario: A revoked sender gets nothing and the run says why', async () => {
    await pairOwner(t, tg, CAROL);
    const automation = await createAutomation({ name: 'For Carol', delivery: { channel: { kind: 'telegram', chat_id: String(CAROL.id) } } });
    expect((await api(t, 'DELETE', `/api/channels/telegram/senders/${CAROL.id}`)).status).toBe(204);
    const before = tg.messagesIn(CAROL.id).length;
    fake.enqueue({ content: 'secret digest' });
    expect((await api(t, 'POST', `/api/automations/${automation.id}/run`)).status).toBe(202);
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 1);
    expect(run).toMatchObject({ outcome: 'error' });
    expect(run!.error).toBe(`Telegram chat ${CAROL.id} is not an approved sender (never paired, or revoked): choose an approved sender to deliver to. Nothing was sent.`);
    expect(fake.completions).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(tg.messagesIn(CAROL.id).slice(before)).toEqual([]);
  });

  it("Scenario: A group member's write asks the owner even when the write policy is allow", async () => {
    const policies = await api(t, 'PUT', '/api/settings/tool-policies', { defaults: { write: 'allow' } });
    expect(policies.status).toBe(200);
    await api(t, 'PUT', '/api/channels/telegram', { groups_enabled: true });
    const member = { id: 9191, first_name: 'Eve' };
    tg.queueMessage({ from: member, chat: GROUP, text: `@${tg.me.username} hi` });
    const [code] = await botMessages(tg, GROUP.id, 1);
    const pairing = /Pairing code: (\w+)/.exec(FakeTelegramServer.visible(code!))![1]!;
    expect((await api(t, 'POST', `/api/channels/telegram/pairings/${pairing}/approve`)).status).toBe(200);
    await botMessages(tg, GROUP.id, 2);
    const write = { id: 'gw1', name: 'write_file', arguments: JSON.stringify({ path: 'from-eve.txt', content: 'pwned' }) };
    fake.enqueue({ toolCalls: [write] }, { content: 'done' });
    tg.queueMessage({ from: member, chat: GROUP, text: `@${tg.me.username} write a file for me` });
    const question = await waitFor(() => tg.messagesIn(GROUP.id).slice(2).find((message) => buttonsOf(message).length > 0), 'the write question');
    expect(FakeTelegramServer.visible(question)).toContain('write_file');
    expect(FakeTelegramServer.visible(question)).toContain('risk write');
    expect(FakeTelegramServer.visible(question)).toContain('Untrusted content in the context: telegram Eve (9191)');
    // a stranger's request is never allowed for good
    expect(buttonsOf(question).map((button) => button.text)).toEqual(['Allow once', 'Deny']);
    expect(existsSync(join(t.config.workspaceDir, 'from-eve.txt'))).toBe(false);
    const deny = tg.queueCallback({ from: OWNER, chatId: GROUP.id, chatType: 'group', messageId: question.message_id, data: buttonsOf(question).at(-1)!.callback_data });
    expect(await callbackAnswer(deny)).toBe('Denied');
    await settled(tg, question, (text) => text.endsWith('Denied'));
    await waitFor(() => fake.completions.length >= 2, 'the turn to go on after the denial');
    expect(existsSync(join(t.config.workspaceDir, 'from-eve.txt'))).toBe(false);
    const audit = await api<{ entries: Array<{ call_id: string; decision: string; by: string }> }>(t, 'GET', '/api/approvals/audit');
    expect(audit.body.entries.find((entry) => entry.call_id === 'gw1')).toMatchObject({ decision: 'deny', by: 'user' });
    // the owner's own write in their private chat still runs under the allow policy, unasked
    fake.enqueue({ toolCalls: [{ ...write, id: 'ow1', arguments: JSON.stringify({ path: 'from-owner.txt', content: 'mine' }) }] }, { content: 'written' });
    tg.queueMessage({ from: OWNER, text: 'write a file' });
    await waitFor(() => existsSync(join(t.config.workspaceDir, 'from-owner.txt')), 'the owner\'s file');
  });
  /** Runs an automation whose run asks for an exec; resolves with the owner's Telegram question. */
  async function automationQuestion(command: string, callId: string): Promise<{ automation: Automation; question: StoredMessage }> {
    fake.enqueue({ toolCalls: [{ id: callId, name: 'exec', arguments: JSON.stringify({ command }) }] }, { content: 'run finished' });
    const automation = await createAutomation({ name: `Ask ${callId}`, approvals: 'wait' });
    const before = tg.messagesIn(OWNER.id).length;
    expect((await api(t, 'POST', `/api/automations/${automation.id}/run`)).status).toBe(202);
    const question = await waitFor(() => tg.messagesIn(OWNER.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the owner\'s question');
    return { automation, question };
  }

  it("Scenario: An automation run's approval reaches the owner on Telegram", async () => {
    const { automation, question } = await automationQuestion('touch auto-approved.txt', 'aq1');
    const shown = FakeTelegramServer.visible(question);
    expect(shown).toContain(`An automation run (auto-${automation.id}) asks:`);
    expect(shown).toContain('touch auto-approved.txt');
    expect(shown).toContain('risk exec');
    expect(buttonsOf(question).map((button) => button.text)).toEqual(['Allow once', 'Always', 'Deny']);
    // the owner's button goes through the approval protocol
    const press = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: buttonsOf(question)[0]!.callback_data });
    expect(await callbackAnswer(press)).toBe('Allowed once');
    await settled(tg, question, (text) => text.endsWith('Allowed once'));
    const [run] = await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 1);
    expect(run).toMatchObject({ outcome: 'ok' });
    expect(existsSync(join(t.config.workspaceDir, 'auto-approved.txt'))).toBe(true);
    const audit = await api<{ entries: Array<{ call_id: string; decision: string; by: string; chat_id: string }> }>(t, 'GET', '/api/approvals/audit');
    expect(audit.body.entries.find((entry) => entry.call_id === 'aq1')).toMatchObject({ decision: 'allow_once', by: 'user', chat_id: `auto-${automation.id}` });
  });

  it('Scenario: The console answers first and the Telegram question shows it resolved', async () => {
    const consoleClient = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue({ toolCalls: [{ id: 'aq2', name: 'exec', arguments: JSON.stringify({ command: 'touch auto-denied.txt' }) }] }, { content: 'run finished' });
      const automation = await createAutomation({ name: 'Console first', approvals: 'wait' });
      const chatId = `auto-${automation.id}`;
      consoleClient.send({ type: 'attach', chat_id: chatId });
      const asked = consoleClient.next('approval_request', (event) => event.chat_id === chatId);
      const before = tg.messagesIn(OWNER.id).length;
      await api(t, 'POST', `/api/automations/${automation.id}/run`);
      const request = await asked;
      const question = await waitFor(() => tg.messagesIn(OWNER.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the owner\'s question');
      consoleClient.send({ type: 'approval', chat_id: chatId, call_id: request.call_id, decision: 'deny' });
      await settled(tg, question, (text) => text.endsWith('Denied'));
      expect(question.reply_markup).toBeUndefined();
      // the button pressed afterwards changes nothing
      const late = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: `ap:${'B'.repeat(22)}:o` });
      expect(await callbackAnswer(late)).toBe('This button is not valid (any more).');
      await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 1);
      expect(existsSync(join(t.config.workspaceDir, 'auto-denied.txt'))).toBe(false);
    } finally {
      await consoleClient.close();
    }
  });

  it('Scenario: The Telegram button answers first and the console card resolves', async () => {
    const consoleClient = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue({ toolCalls: [{ id: 'aq3', name: 'exec', arguments: JSON.stringify({ command: 'touch auto-tg-first.txt' }) }] }, { content: 'run finished' });
      const automation = await createAutomation({ name: 'Telegram first', approvals: 'wait' });
      const chatId = `auto-${automation.id}`;
      consoleClient.send({ type: 'attach', chat_id: chatId });
      const asked = consoleClient.next('approval_request', (event) => event.chat_id === chatId);
      const before = tg.messagesIn(OWNER.id).length;
      await api(t, 'POST', `/api/automations/${automation.id}/run`);
      const request = await asked;
      const question = await waitFor(() => tg.messagesIn(OWNER.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the owner\'s question');
      const resolved = consoleClient.next('approval_resolved', (event) => event.chat_id === chatId);
      const deny = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: buttonsOf(question).at(-1)!.callback_data });
      expect(await callbackAnswer(deny)).toBe('Denied');
      expect(await resolved).toMatchObject({ call_id: request.call_id, decision: 'deny', by: 'user' });
      // the console's late answer is refused: the request is settled
      consoleClient.send({ type: 'approval', chat_id: chatId, call_id: request.call_id, decision: 'allow_once' });
      const refused = await consoleClient.next('error', (event) => event.chat_id === chatId);
      expect(refused.code).toBe('unknown_approval');
      await waitForRuns(t.httpUrl, automation.id, (list) => ended(list).length >= 1);
      expect(existsSync(join(t.config.workspaceDir, 'auto-tg-first.txt'))).toBe(false);
    } finally {
      await consoleClient.close();
    }
  });

  it('Scenario: An approval of a chat no console follows reaches the owner; a stranger cannot press it', async () => {
    const { question } = await automationQuestion('touch auto-stranger.txt', 'aq4');
    const press = tg.queueCallback({ from: { id: 6262, first_name: 'Mallory' }, chatId: OWNER.id, messageId: question.message_id, data: buttonsOf(question)[0]!.callback_data });
    expect(await callbackAnswer(press)).toBe('Only the owner can answer approvals.');
    expect(existsSync(join(t.config.workspaceDir, 'auto-stranger.txt'))).toBe(false);
    const deny = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: buttonsOf(question).at(-1)!.callback_data });
    expect(await callbackAnswer(deny)).toBe('Denied');
    // a console chat nobody follows: its request goes to the owner too
    const chatId = 'unwatched-chat';
    const sender = await WsTestClient.connect(t.wsUrl);
    // the model answers after the console has gone
    fake.enqueue({ toolCalls: [{ id: 'aq5', name: 'exec', arguments: JSON.stringify({ command: 'touch unwatched.txt' }) }], delayMs: 600 }, { content: 'ok' });
    const before = tg.messagesIn(OWNER.id).length;
    sender.sendMessage(chatId, 'run it');
    await waitFor(() => fake.completions.length > 0 || null, 'the model call');
    await sender.close();
    const unwatched = await waitFor(() => tg.messagesIn(OWNER.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the unwatched chat\'s question');
    expect(FakeTelegramServer.visible(unwatched)).toContain('A chat no console is following (unwatched-chat) asks:');
    const allow = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: unwatched.message_id, data: buttonsOf(unwatched)[0]!.callback_data });
    expect(await callbackAnswer(allow)).toBe('Allowed once');
    await waitFor(() => existsSync(join(t.config.workspaceDir, 'unwatched.txt')), 'the unwatched chat\'s command');
    await waitFor(async () => {
      const { body } = await api<{ messages: Array<{ role: string; content: string }> }>(t, 'GET', `/api/sessions/${chatId}/messages`);
      return body.messages.some((message) => message.role === 'assistant' && message.content === 'ok');
    }, 'the unwatched turn to end');
  });
});
