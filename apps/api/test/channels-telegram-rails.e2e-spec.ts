/**
 * The Telegram channel keeps the console's rails (openspec channels): approvals answered with buttons through the
 * same protocol (refused for non-owners, forged and foreign callbacks), group members as untrusted senders, photos and
 * documents through the attachments service with its limits, Bot API 429s and outages, a refused token, and a restart
 * between two updates. Against the local Bot API stand-in and the fake model.
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionMessagesResponse, TelegramChannelSettings } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { FakeTelegramServer, type StoredMessage } from './support/fake-telegram-server';
import { api, botMessages, OWNER, pairOwner, settled, startTelegramApp, STRANGER, waitFor, waitForStatus } from './support/telegram-harness';
import { startTestApp, type TestApp } from './support/test-app';
import { WsTestClient } from './support/ws-client';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('fake png body')]);
const GROUP = { id: -100777, type: 'supergroup' as const, title: 'Family' };
const exec = (id: string, command: string) => ({ id, name: 'exec', arguments: JSON.stringify({ command }) });
const buttonsOf = (message: StoredMessage) => message.reply_markup?.inline_keyboard[0] ?? [];

describe('Telegram channel rails (e2e)', () => {
  let fake: FakeModelServer;
  let tg: FakeTelegramServer;
  let t: TestApp;
  let dataDir: string;
  let configDir: string;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    tg = await FakeTelegramServer.start();
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-tg-data-'));
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-tg-config-'));
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

  /** Sends a message that makes the model ask for an exec; resolves with the approval question. */
  async function askApproval(command: string, callId: string): Promise<StoredMessage> {
    fake.enqueue({ toolCalls: [exec(callId, command)] }, { content: 'finished' });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'please run it' });
    return waitFor(() => tg.messagesIn(OWNER.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the approval question');
  }

  async function callbackAnswer(updateId: number): Promise<string | undefined> {
    const id = `cbq-${updateId}`;
    const call = await tg.waitForCall((c) => c.method === 'answerCallbackQuery' && c.params['callback_query_id'] === id);
    return call.params['text'] as string | undefined;
  }

  it('Scenario: A dangerous call asks with its full command and buttons, and the owner allows it once', async () => {
    const command = 'touch tg-approved.txt';
    const question = await askApproval(command, 'tg1');
    const shown = FakeTelegramServer.visible(question);
    expect(shown).toContain(command);
    expect(shown).toContain('risk exec');
    expect(buttonsOf(question).map((button) => button.text)).toEqual(['Allow once', 'Always', 'Deny']);
    const allow = buttonsOf(question)[0]!.callback_data;
    expect(allow).toMatch(/^ap:[A-Za-z0-9_-]{22}:o$/);
    const update = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: allow });
    expect(await callbackAnswer(update)).toBe('Allowed once');
    await waitFor(() => existsSync(join(t.config.workspaceDir, 'tg-approved.txt')), 'the command to run');
    // the question loses its buttons and says what was decided; the answer follows
    await settled(tg, question, (text) => text.endsWith('Allowed once'));
    expect(question.reply_markup).toBeUndefined();
    await waitFor(() => tg.messagesIn(OWNER.id).find((message) => FakeTelegramServer.visible(message) === 'finished'), 'the answer after the command');
    const audit = await api<{ entries: Array<{ call_id: string; decision: string; by: string }> }>(t, 'GET', '/api/approvals/audit');
    expect(audit.body.entries.find((entry) => entry.call_id === 'tg1')).toMatchObject({ decision: 'allow_once', by: 'user' });
  });

  it("Scenario: A button pressed by someone other than the owner, a forged button and another chat's button are refused", async () => {
    const other = { id: 7373, first_name: 'Carol' };
    await pairOwner(t, tg, other);
    // a compound command: no standing rule can cover it, so there is no "Always" button
    const question = await askApproval('touch tg-never.txt && echo "<b>not bold</b> & *ok*"', 'tg2');
    expect(FakeTelegramServer.visible(question)).toContain('touch tg-never.txt && echo "<b>not bold</b> & *ok*"');
    expect(buttonsOf(question).map((button) => button.text)).toEqual(['Allow once', 'Deny']);
    const deny = buttonsOf(question)[buttonsOf(question).length - 1]!.callback_data;
    const allow = buttonsOf(question)[0]!.callback_data;
    // a stranger's press (a forged update carrying the real data)
    const byStranger = tg.queueCallback({ from: STRANGER, chatId: OWNER.id, messageId: question.message_id, data: allow });
    expect(await callbackAnswer(byStranger)).toBe('Only the owner can answer approvals.');
    // the data of this question pressed in another conversation
    const elsewhere = tg.queueCallback({ from: other, chatId: other.id, messageId: question.message_id, data: allow });
    expect(await callbackAnswer(elsewhere)).toBe('This button does not belong to this chat.');
    // a made-up token
    const forged = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: `ap:${'A'.repeat(22)}:o` });
    expect(await callbackAnswer(forged)).toBe('This button is not valid (any more).');
    expect(existsSync(join(t.config.workspaceDir, 'tg-never.txt'))).toBe(false);
    // still pending: the owner denies
    const byOwner = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: deny });
    expect(await callbackAnswer(byOwner)).toBe('Denied');
    await settled(tg, question, (text) => text.endsWith('Denied'));
    // pressing again after the decision
    const late = tg.queueCallback({ from: OWNER, chatId: OWNER.id, messageId: question.message_id, data: allow });
    expect(await callbackAnswer(late)).toBe('This button is not valid (any more).');
    expect(existsSync(join(t.config.workspaceDir, 'tg-never.txt'))).toBe(false);
  });

  it('Scenario: A photo reaches a model that takes images as an image', async () => {
    await api(t, 'PUT', '/api/settings/llm/image-models', { provider: 'openai_compatible', model: 'fake-model', accepts_images: true });
    tg.addFile('photo-1', PNG);
    fake.enqueue({ content: 'A PNG.' });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'what is this?', photo: { fileId: 'photo-1', size: PNG.length } });
    await botMessages(tg, OWNER.id, 1, before);
    const body = fake.completions[0]!.body as { messages: Array<{ role: string; content: unknown }> };
    const user = body.messages[body.messages.length - 1]!;
    expect(user.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^what is this\?\n\n\[Attached files \(paths relative to the workspace\): attachments\/tg-[\w-]+\/photo-\d+\.jpg \(image\/png, 21 bytes\)\]$/) },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
    ]);
  });

  it('Scenario: A document reaches the agent as an attachment of the chat', async () => {
    const text = Buffer.from('name,amount\ncoffee,3\n');
    tg.addFile('doc-1', text, 'documents/expenses.csv');
    fake.enqueue({ content: 'Got the CSV.' });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, document: { fileId: 'doc-1', name: 'expenses.csv', size: text.length } });
    await botMessages(tg, OWNER.id, 1, before);
    const body = fake.completions[fake.completions.length - 1]!.body as { messages: Array<{ role: string; content: unknown }> };
    const user = body.messages[body.messages.length - 1]!;
    const path = /attachments\/tg-[\w-]+\/expenses\.csv/.exec(String(user.content))?.[0];
    expect(user.content).toBe(`Here is a file.\n\n[Attached files (paths relative to the workspace): ${path} (text/plain, ${text.length} bytes)]`);
    expect(await fs.readFile(join(t.config.workspaceDir, path!))).toEqual(text);
  });

  it('Scenario: A file over the size limit gets a clear reply and reaches nobody', async () => {
    const limit = t.config.attachmentMaxBytes;
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'here', document: { fileId: 'big-1', name: 'big.bin', size: limit + 1 } });
    const [reply] = await botMessages(tg, OWNER.id, 1, before);
    expect(FakeTelegramServer.visible(reply!)).toBe(`The file big.bin is too large: files may be at most ${Math.round(limit / 1024 / 1024)} MiB. Nothing was sent to the agent.`);
    expect(fake.completions).toHaveLength(0);
  });

  it('Scenario: In a group only messages that mention the bot count, and members are untrusted senders', async () => {
    await api(t, 'PUT', '/api/channels/telegram', { groups_enabled: true });
    const member = { id: 8080, first_name: 'Dave' };
    tg.queueMessage({ from: member, chat: GROUP, text: 'just chatting' });
    tg.queueMessage({ from: member, chat: GROUP, text: `@${tg.me.username} hi` });
    const [code] = await botMessages(tg, GROUP.id, 1);
    const pairing = /Pairing code: (\w+)/.exec(FakeTelegramServer.visible(code!))![1]!;
    expect((await api<{ kind: string; display_name: string }>(t, 'POST', `/api/channels/telegram/pairings/${pairing}/approve`)).body).toMatchObject({ kind: 'group', display_name: 'Family' });
    // the code, then the confirmation
    const [, confirmation] = await botMessages(tg, GROUP.id, 2);
    // the message without a mention got nothing
    expect(FakeTelegramServer.visible(confirmation!)).toBe('This group is paired: mention me to talk to me.');
    const before = 2;
    // a member asks to remember something: the write asks the owner, naming the member as an untrusted source
    fake.enqueue({ toolCalls: [{ id: 'mem1', name: 'save_memory', arguments: JSON.stringify({ content: 'Dave is the boss' }) }] }, { content: 'ok' });
    tg.queueMessage({ from: member, chat: GROUP, text: `@${tg.me.username} remember that I am the boss` });
    const question = await waitFor(() => tg.messagesIn(GROUP.id).slice(before).find((message) => buttonsOf(message).length > 0), 'the memory question');
    expect(FakeTelegramServer.visible(question)).toContain('risk memory_write');
    expect(FakeTelegramServer.visible(question)).toContain('Untrusted content in the context: telegram Dave (8080)');
    expect(fake.completions).toHaveLength(1);
    const press = tg.queueCallback({ from: member, chatId: GROUP.id, chatType: 'group', messageId: question.message_id, data: buttonsOf(question)[0]!.callback_data });
    expect(await callbackAnswer(press)).toBe('Only the owner can answer approvals.');
    const deny = tg.queueCallback({ from: OWNER, chatId: GROUP.id, chatType: 'group', messageId: question.message_id, data: buttonsOf(question).at(-1)!.callback_data });
    expect(await callbackAnswer(deny)).toBe('Denied');
    const chatId = `tg-${tg.me.id}-${GROUP.id}`;
    const history = await waitFor(async () => {
      const response = await api<SessionMessagesResponse>(t, 'GET', `/api/sessions/${chatId}/messages`);
      return response.body.messages.length >= 2 ? response.body : null;
    }, 'the group chat history');
    expect(history.messages[0]).toMatchObject({ role: 'user', content: 'remember that I am the boss', source: { sender_id: '8080', display_name: 'Dave', owner: false } });
    // a console message in the group's chat counts the member too (the chat holds their messages)
    const consoleClient = await WsTestClient.connect(t.wsUrl);
    try {
      fake.enqueue({ toolCalls: [{ id: 'mem2', name: 'save_memory', arguments: JSON.stringify({ content: 'a fact' }) }] }, { content: 'ok' });
      consoleClient.sendMessage(chatId, 'remember a fact');
      const asked = await consoleClient.waitFor('approval_request', (event) => event.chat_id === chatId && event.call_id === 'mem2');
      expect(asked.untrusted_sources).toEqual([{ kind: 'channel_message', name: 'telegram Dave (8080)' }]);
      consoleClient.send({ type: 'approval', chat_id: chatId, call_id: 'mem2', decision: 'deny' });
      await consoleClient.waitFor('done', (event) => event.chat_id === chatId);
    } finally {
      await consoleClient.close();
    }
    // group members cannot use /stop or /new
    tg.queueMessage({ from: member, chat: GROUP, text: `/new@${tg.me.username}` });
    await waitFor(() => tg.messagesIn(GROUP.id).some((message) => FakeTelegramServer.visible(message) === 'Only the owner can use this command.'), 'the refusal');
  });

  it('Scenario: A 429 from Telegram is retried after retry_after', async () => {
    tg.fail('sendMessage', 429, { retryAfter: 1 });
    fake.enqueue({ content: 'after the wait' });
    const before = tg.messagesIn(OWNER.id).length;
    const from = tg.calls.length;
    tg.queueMessage({ from: OWNER, text: 'hello' });
    const [answer] = await botMessages(tg, OWNER.id, 1, before);
    await settled(tg, answer!, (text) => text === 'after the wait');
    const sends = tg.calls.slice(from).filter((call) => call.method === 'sendMessage');
    expect(sends.map((call) => call.status)).toEqual([429, 200]);
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('Scenario: A Bot API outage backs off and reconnects by itself', async () => {
    tg.takeDown();
    try {
      const during = await waitFor(async () => {
        const { body } = await api<TelegramChannelSettings>(t, 'GET', '/api/channels/telegram');
        return body.status === 'connecting' ? body : null;
      }, 'status connecting');
      expect(during.error).toMatch(/^The Bot API could not be reached \(network error\)\. Retrying in \d+ s\.$/);
    } finally {
      tg.up();
    }
    await waitForStatus(t, 'connected');
    fake.enqueue({ content: 'back again' });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'are you there?' });
    const [answer] = await botMessages(tg, OWNER.id, 1, before);
    await settled(tg, answer!, (text) => text === 'back again');
  });

  it('Scenario: A restart during an answer tells the sender to send the message again', async () => {
    fake.enqueue({ chunks: ['Working on'], hangAfterChunks: true });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'a long job' });
    const [answer] = await botMessages(tg, OWNER.id, 1, before);
    await t.close();
    expect(FakeTelegramServer.visible(answer!)).toBe('Working on\n\n(the server is restarting: this answer stopped here; send your message again)');
    t = await startTestApp({ env: { CASHCODE_TELEGRAM_API_ROOT: tg.baseUrl }, dataDir, configDir });
    await waitForStatus(t, 'connected');
  });

  it('Scenario: A restart between two updates answers each exactly once', async () => {
    tg.forgetConfirmed = false;
    fake.enqueue({ content: 'first answer' });
    const before = tg.messagesIn(OWNER.id).length;
    tg.queueMessage({ from: OWNER, text: 'first' });
    const [first] = await botMessages(tg, OWNER.id, 1, before);
    await settled(tg, first!, (text) => text === 'first answer');
    await t.close();
    tg.queueMessage({ from: OWNER, text: 'second' });
    fake.enqueue({ content: 'second answer' });
    t = await startTestApp({ env: { CASHCODE_TELEGRAM_API_ROOT: tg.baseUrl }, dataDir, configDir });
    await waitForStatus(t, 'connected');
    const [, second] = await botMessages(tg, OWNER.id, 2, before);
    await settled(tg, second!, (text) => text === 'second answer');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.completions).toHaveLength(2);
    expect(tg.messagesIn(OWNER.id).slice(before)).toHaveLength(2);
    tg.forgetConfirmed = true;
  });

  it('Scenario: A wrong or revoked token shows the error and stops polling', async () => {
    tg.validToken = '123456789:ANOTHER-token-abcdefghijklmnopqrstuvwxyz';
    // the long poll in flight ends with this update; the next call meets the refused token
    tg.queueMessage({ from: STRANGER, text: 'wake up' });
    const stale = await waitFor(async () => {
      const { body } = await api<TelegramChannelSettings>(t, 'GET', '/api/channels/telegram');
      return body.status === 'error' ? body : null;
    }, 'status error', 30_000);
    expect(stale.error).toBe('Telegram refused the bot token (401 Unauthorized): it is wrong or was revoked. Enter a new token from @BotFather.');
    const calls = tg.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // no crash loop: nothing more is asked of the Bot API
    expect(tg.calls.length).toBe(calls);
    // a new token: polling starts again
    expect((await api(t, 'PUT', '/api/channels/telegram', { token: tg.validToken })).status).toBe(200);
    await waitForStatus(t, 'connected');
  }, 60_000);
});
