/**
 * The WebSocket protocol through the real gateway (openspec chat): every client frame, every error reply, metadata
 * validation and sanitisation, garbage and oversized frames.
 */
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { FakeModelServer } from './support/fake-model-server';
import { ensureMcpServersBuilt } from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const LLM = { provider: 'openai_compatible', model: 'fake-model' };

describe('ChatGateway protocol', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  /** Sends a frame and returns the next error reply. */
  async function errorFor(frame: unknown): Promise<Record<string, unknown>> {
    const reply = client.next('error');
    if (typeof frame === 'string') client.sendRaw(frame);
    else client.send(frame);
    return { ...(await reply) };
  }

  describe('connection (openspec chat)', () => {
    it('Scenario: ready carries a fresh chat id and a client id; nothing is created on disk', async () => {
      const ready = client.ready;
      expect(ready.chat_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ready.client_id).toMatch(/^client-[0-9a-f]{12}$/);
      expect(existsSync(join(t.config.memoryDir, ready.chat_id))).toBe(false);
      const other = await WsTestClient.connect(t.wsUrl);
      expect(other.chatId).not.toBe(ready.chat_id);
      expect(other.ready.client_id).not.toBe(ready.client_id);
      await other.close();
    });

    it('Scenario: a cross-site Origin is refused before the socket opens', async () => {
      await expect(WsTestClient.connect(t.wsUrl, { origin: 'https://evil.example' })).rejects.toThrow(/403/);
    });
  });

  describe('frames (openspec chat)', () => {
    it('Scenario: ping → pong', async () => {
      const pong = client.next('pong');
      client.send({ type: 'ping' });
      expect(await pong).toEqual({ event: 'pong' });
    });

    it('Scenario: new_chat → attached with a new uuid', async () => {
      const attached = client.next('attached');
      client.send({ type: 'new_chat' });
      const event = await attached;
      expect(event.chat_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(event.chat_id).not.toBe(client.chatId);
    });

    it('Scenario: attach subscribes to any valid id without an existence check', async () => {
      const attached = client.next('attached');
      client.send({ type: 'attach', chat_id: 'never-seen_1:x' });
      expect(await attached).toMatchObject({ event: 'attached', chat_id: 'never-seen_1:x', turn_active: false });
    });

    it.each([
      [{ type: 'attach', chat_id: 'bad id' }],
      [{ type: 'attach' }],
      [{ type: 'cancel', chat_id: 'x'.repeat(65) }],
      [{ type: 'stop', chat_id: 'a/b' }],
      [{ type: 'message', chat_id: '../etc', content: 'hi', metadata: { llm: LLM } }],
    ])('Scenario: invalid chat id %j → `invalid chat_id` without chat_id', async (frame) => {
      expect(await errorFor(frame)).toEqual({ event: 'error', detail: 'invalid chat_id', code: 'invalid_chat_id' });
    });

    it('Scenario: cancel/stop on an idle chat → stop_ack only', async () => {
      const ack = client.next('stop_ack');
      client.send({ type: 'cancel', chat_id: 'idle-chat' });
      expect(await ack).toEqual({ event: 'stop_ack', chat_id: 'idle-chat' });
      const ack2 = client.next('stop_ack');
      client.send({ type: 'stop', chat_id: 'idle-chat' });
      expect(await ack2).toEqual({ event: 'stop_ack', chat_id: 'idle-chat' });
      const pong = client.next('pong');
      client.send({ type: 'ping' });
      await pong;
      expect(client.ofType('error')).toHaveLength(0);
    });

    it.each(['not json', '[1,2]', '{"no":"type"}', '{"type": 7}', '{"type":"ping"', '   ', 'null'])(
      'Scenario: %j → `typed JSON envelope required`',
      async (raw) => {
        expect(await errorFor(raw)).toEqual({
          event: 'error',
          detail: 'typed JSON envelope required',
          code: 'invalid_envelope',
        });
      },
    );

    it("Scenario: unknown type → `unknown type: 'T'`", async () => {
      expect(await errorFor({ type: 'subscribe', chat_id: 'c1' })).toEqual({
        event: 'error',
        detail: "unknown type: 'subscribe'",
        code: 'unknown_type',
      });
    });

    it('Scenario: a binary frame is decoded as UTF-8', async () => {
      const pong = client.next('pong');
      client.sendRaw(Buffer.from('  {"type":"ping"}  ', 'utf8'), true);
      expect(await pong).toEqual({ event: 'pong' });
    });

    it('Scenario: an undecodable binary frame is ignored and the connection keeps working', async () => {
      client.sendRaw(Buffer.from([0xc3, 0x28, 0xff]), true);
      const pong = client.next('pong');
      client.send({ type: 'ping' });
      await pong;
      expect(client.ofType('error')).toHaveLength(0);
    });

    it('Scenario: a frame over 1 MiB closes that connection (1009); the server keeps serving', async () => {
      client.sendRaw(JSON.stringify({ type: 'ping', pad: 'x'.repeat(1024 * 1024 + 10) }));
      expect(await client.waitForClose()).toBe(1009);
      const other = await WsTestClient.connect(t.wsUrl);
      const pong = other.next('pong');
      other.send({ type: 'ping' });
      await pong;
      await other.close();
    });

    it('Scenario: a burst of garbage frames never crashes the server', async () => {
      const garbage = ['{', '}', '{"type":null}', '\u0000', '{"type":"message","chat_id":{}}', '9'.repeat(5000)];
      for (let i = 0; i < 50; i++) client.sendRaw(garbage[i % garbage.length] as string);
      await client.waitForCount('error', 50);
      const health = await request(t.httpUrl).get('/api/health');
      expect(health.status).toBe(200);
    });
  });

  describe('message validation (openspec chat)', () => {
    it.each([undefined, '', '  \n\t ', 12, null])('Scenario: content %j → `missing content` with chat_id', async (content) => {
      expect(await errorFor({ type: 'message', chat_id: 'c1', content, metadata: { llm: LLM } })).toEqual({
        event: 'error',
        detail: 'missing content',
        chat_id: 'c1',
        code: 'missing_content',
      });
    });

    const selections = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `skill-${i}` }));
    it.each<[string, unknown, string]>([
      ['absent metadata', undefined, 'llm selection is required'],
      ['null metadata', null, 'llm selection is required'],
      ['metadata not an object', 'x', 'metadata must be an object'],
      ['llm missing', {}, 'llm selection is required'],
      ['llm not an object', { llm: 'openai' }, 'llm must be an object'],
      ['unknown provider', { llm: { provider: 'gemini', model: 'm' } }, 'llm.provider is invalid'],
      ['model not a string', { llm: { provider: 'ollama', model: 3 } }, 'llm.model must be a string'],
      ['blank model', { llm: { provider: 'ollama', model: '  ' } }, 'llm.model is invalid'],
      ['model over 256 chars', { llm: { provider: 'ollama', model: 'm'.repeat(257) } }, 'llm.model is invalid'],
      ['model with NUL', { llm: { provider: 'ollama', model: 'a\u0000b' } }, 'llm.model is invalid'],
      [
        'more than 8 selections (counted before de-duplication)',
        { llm: LLM, mentioned_skills: selections(5), selected_mcp_connectors: Array(4).fill({ server: 'github' }) },
        'at most 8 Skill/MCP selections are allowed',
      ],
      ['skills not a list', { llm: LLM, mentioned_skills: {} }, 'mentioned_skills must be a list'],
      ['skill entry not an object', { llm: LLM, mentioned_skills: ['weather'] }, 'mentioned_skills entries must be objects'],
      ['invalid skill name', { llm: LLM, mentioned_skills: [{ name: 'Bad Name' }] }, 'mentioned_skills.name is invalid'],
      [
        'invalid connector',
        { llm: LLM, selected_mcp_connectors: [{ server: 'a.b' }] },
        'selected_mcp_connectors.server is invalid',
      ],
      [
        'label not a string',
        { llm: LLM, mentioned_skills: [{ name: 'weather', label: 5 }] },
        'mentioned_skills.label must be a string',
      ],
      [
        'label over 100 chars',
        { llm: LLM, selected_mcp_connectors: [{ server: 'github', label: 'l'.repeat(101) }] },
        'selected_mcp_connectors.label must be at most 100 characters',
      ],
    ])('Scenario: %s → error with chat_id', async (_name, metadata, detail) => {
      expect(await errorFor({ type: 'message', chat_id: 'c1', content: 'hi', metadata })).toEqual({
        event: 'error',
        detail,
        chat_id: 'c1',
        code: 'invalid_selection_metadata',
      });
    });

    it('Scenario: with no model configured the turn only gets an error and nothing is created', async () => {
      const chatId = 'unconfigured-chat';
      const error = client.next('error');
      client.sendMessage(chatId, 'hello', { provider: 'ollama', model: 'llama3' });
      expect(await error).toEqual({
        event: 'error',
        chat_id: chatId,
        code: 'llm_not_configured',
        detail: expect.stringMatching(/not configured \(ollama\).*Settings/) as unknown as string,
      });
      expect(client.chatEvents(chatId).map((e) => e.event)).toEqual(['error']);
      expect(existsSync(join(t.config.memoryDir, chatId))).toBe(false);
    });

    it('Scenario: sanitised selections are persisted on the user record; unknown keys and the llm are dropped', async () => {
      ensureMcpServersBuilt();
      await configureFakeModel(t.httpUrl, fake.baseUrl);
      const chatId = 'sanitised-chat';
      const done = client.next('done');
      client.send({
        type: 'message',
        chat_id: chatId,
        content: 'use weather',
        metadata: {
          llm: { provider: 'openai_compatible', model: ' fake-model ' },
          mentioned_skills: [
            { name: 'weather', label: ' Weather\u0000 ' },
            { name: 'weather', label: 'dupe' },
          ],
          selected_mcp_connectors: [{ server: 'test_stdio_mcp', label: null }],
          untrusted: { x: 1 },
        },
      });
      await done;
      const history = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
      const user = JSON.parse(history.split('\n')[0] as string) as Record<string, unknown>;
      expect(user).toMatchObject({
        role: 'user',
        content: 'use weather',
        mentioned_skills: [{ name: 'weather', label: 'Weather' }],
        selected_mcp_connectors: [{ server: 'test_stdio_mcp' }],
      });
      expect(user).not.toHaveProperty('llm');
      expect(user).not.toHaveProperty('untrusted');
      expect((fake.completions.at(-1)?.body as { model: string }).model).toBe('fake-model');
    });
  });
});
