/**
 * The OpenAI-compatible endpoint over real HTTP (openspec openai-compat): the real `openai` SDK as the client against
 * the started app and the fake model server; raw fetch for what an SDK would never send.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { OpenAiCompatSettings } from '@cashcode/contracts';
import { chatIdForUser } from '../src/openai-compat/openai-compat.service';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, joinedDeltas, WsTestClient } from './support/ws-client';

interface CompletionBody {
  model: string;
  temperature?: number;
  max_tokens?: number;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}

const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;

async function putSettings(t: TestApp, body: Record<string, unknown>): Promise<OpenAiCompatSettings> {
  const response = await fetch(`${t.httpUrl}/api/settings/openai-compat`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as OpenAiCompatSettings;
}

async function createKey(t: TestApp, name: string): Promise<{ id: string; secret: string }> {
  const response = await fetch(`${t.httpUrl}/api/settings/openai-compat/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { key: { id: string }; secret: string };
  return { id: body.key.id, secret: body.secret };
}

function v1(t: TestApp, path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return fetch(`${t.httpUrl}${path}`, { ...init, headers });
}

async function errorOf(response: Response): Promise<{ message: string; type: string; code: string | null; param: string | null }> {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: { message: string; type: string; code: string | null; param: string | null } };
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

describe('OpenAI-compatible endpoint', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    fake.models = ['fake-model', 'other-model'];
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(() => fake.reset());

  describe('while off (the default)', () => {
    it('Scenario: the endpoint is off by default', async () => {
      const settings = (await (await fetch(`${t.httpUrl}/api/settings/openai-compat`)).json()) as OpenAiCompatSettings;
      expect(settings).toMatchObject({ enabled: false, keys: [], tool_progress: false, map_user_to_chat: false });
      const created = await createKey(t, 'early');
      for (const response of [
        await v1(t, '/v1/models'),
        await v1(t, '/v1/models', { key: created.secret }),
        await v1(t, '/v1/chat/completions', { method: 'POST', key: created.secret, body: JSON.stringify({ model: 'cashcode', messages: [] }) }),
      ]) {
        expect(response.status).toBe(404);
        expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code: 'endpoint_disabled' });
      }
      expect(fake.completions).toHaveLength(0);
      await fetch(`${t.httpUrl}/api/settings/openai-compat/keys/${created.id}`, { method: 'DELETE' });
    });
  });

  describe('when enabled', () => {
    beforeAll(async () => {
      await putSettings(t, { enabled: true, default_model: { provider: 'openai_compatible', model: 'fake-model' } });
      ({ secret: key } = await createKey(t, 'sdk tests'));
      client = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: key, maxRetries: 0 });
    });

    it('Scenario: keys are stored only as hashes and shown once', async () => {
      const settings = (await (await fetch(`${t.httpUrl}/api/settings/openai-compat`)).json()) as OpenAiCompatSettings;
      expect(settings.enabled).toBe(true);
      const listed = settings.keys.find((entry) => entry.name === 'sdk tests');
      expect(listed).toMatchObject({ prefix: key.slice(0, 10) });
      expect(JSON.stringify(settings)).not.toContain(key);
      const file = await fs.readFile(join(t.configDir, 'settings', 'openai-compat.json'), 'utf8');
      expect(file).not.toContain(key);
      expect(file).toMatch(/"hash": "[0-9a-f]{64}"/);
      expect((await fs.stat(join(t.configDir, 'settings', 'openai-compat.json'))).mode & 0o777).toBe(0o600);
    });

    it('Scenario: the model list names cashcode and every discovered model', async () => {
      const page = await client.models.list();
      expect(page.data.map((model) => model.id)).toEqual([
        'cashcode',
        'cashcode:openai_compatible/fake-model',
        'cashcode:openai_compatible/other-model',
      ]);
      expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'cashcode' });
      expect((await client.models.retrieve('cashcode')).id).toBe('cashcode');
    });

    it('Scenario: a non-streaming completion answers with the agent\'s final answer', async () => {
      fake.enqueue({ content: 'Hello from the agent', usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } });
      const completion = await client.chat.completions.create({
        model: 'cashcode',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
        ],
        temperature: 0.3,
        max_tokens: 50,
        top_p: 0.9,
      });
      expect(completion.object).toBe('chat.completion');
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.model).toBe('cashcode');
      expect(completion.choices).toEqual([
        expect.objectContaining({ index: 0, finish_reason: 'stop', message: expect.objectContaining({ role: 'assistant', content: 'Hello from the agent' }) }),
      ]);
      expect(completion.usage).toEqual({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
      const body = bodyOf(fake.completions[0]);
      expect(body.model).toBe('fake-model');
      expect(body.temperature).toBe(0.3);
      expect(body.max_tokens).toBe(50);
      // CashCode's own system prompt first, then the client's system message, then the conversation
      expect(body.messages[0]?.role).toBe('system');
      expect(body.messages[0]?.content).not.toBe('Answer briefly.');
      expect(body.messages.slice(1)).toEqual([
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Say hello' },
      ]);
    });

    it('Scenario: a discovered model is chosen with cashcode:<provider>/<model>', async () => {
      fake.enqueue({ content: 'other' });
      const completion = await client.chat.completions.create({
        model: 'cashcode:openai_compatible/other-model',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(completion.choices[0]?.message.content).toBe('other');
      expect(bodyOf(fake.completions[0]).model).toBe('other-model');
    });

    it('Scenario: a streaming completion sends chunks, a usage chunk and [DONE]', async () => {
      fake.enqueue({ chunks: ['Stream', 'ed ', 'answer'], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
      const stream = await client.chat.completions.create({
        model: 'cashcode',
        messages: [{ role: 'user', content: 'stream please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]?.id)).toBe(true);
      expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('Streamed answer');
      const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason === 'stop');
      expect(finish).toBeDefined();
      const last = chunks.at(-1);
      expect(last?.choices).toEqual([]);
      expect(last?.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    });

    it('Scenario: the raw stream is SSE ending with [DONE]', async () => {
      fake.enqueue({ content: 'raw' });
      const response = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const text = await response.text();
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      const events = text.split('\n\n').filter((event) => event !== '' && event !== 'data: [DONE]');
      expect(events.every((event) => event.startsWith('data: {'))).toBe(true);
      // no usage field without include_usage
      expect(events.some((event) => event.includes('"usage"'))).toBe(false);
    });

    it('Scenario: a tool-using turn gives the final answer only', async () => {
      await fs.writeFile(join(t.config.workspaceDir, 'note.txt'), 'the secret word is tangerine\n');
      fake.enqueue({ toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'note.txt' }) }] }, { content: 'The word is tangerine.' });
      const completion = await client.chat.completions.create({
        model: 'cashcode',
        messages: [{ role: 'user', content: 'What is the word in note.txt?' }],
      });
      expect(completion.choices[0]?.message.content).toBe('The word is tangerine.');
      const second = bodyOf(fake.completions[1]);
      const toolMessage = second.messages.find((message) => message.role === 'tool');
      expect(toolMessage?.content).toContain('tangerine');
    });

    it('Scenario: a stateless request leaves no chat behind', async () => {
      fake.enqueue(
        { toolCalls: [{ name: 'skill_load', arguments: JSON.stringify({ name: 'chart-visualization' }) }] },
        { content: 'Loaded.' },
      );
      const completion = await client.chat.completions.create({ model: 'cashcode', messages: [{ role: 'user', content: 'load the chart skill' }] });
      expect(completion.choices[0]?.message.content).toBe('Loaded.');
      const toolMessage = bodyOf(fake.completions[1]).messages.find((message) => message.role === 'tool');
      expect(toolMessage?.content).toContain('chart-visualization');
      // the answer goes out first; the clean-up follows at once
      const leftovers = async () => (await fs.readdir(t.config.memoryDir)).filter((entry) => /^openai-[0-9a-f]{24}$/.test(entry));
      for (let i = 0; i < 100 && (await leftovers()).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await leftovers()).toEqual([]);
      const sessions = JSON.stringify(await (await fetch(`${t.httpUrl}/api/sessions`)).json());
      expect(sessions).not.toMatch(/openai-[0-9a-f]{24}/);
    });

    it('Scenario: a tool whose policy is ask is denied without waiting', async () => {
      fake.enqueue({ toolCalls: [{ name: 'exec', arguments: JSON.stringify({ command: 'echo hi' }) }] }, { content: 'I could not run it.' });
      const started = Date.now();
      const completion = await client.chat.completions.create({
        model: 'cashcode',
        messages: [{ role: 'user', content: 'run echo hi' }],
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(completion.choices[0]?.message.content).toBe('I could not run it.');
      const toolMessage = bodyOf(fake.completions[1]).messages.find((message) => message.role === 'tool');
      expect(toolMessage?.content).toContain('needs approval; headless clients (the OpenAI-compatible API) cannot approve');
      expect(toolMessage?.content).toContain('allow the tool in Tools & approvals');
    });

    it('Scenario: a chat id header runs the turn in that CashCode chat', async () => {
      const chatId = 'openai-e2e-chat';
      const ws = await WsTestClient.connect(t.wsUrl);
      try {
        ws.send({ type: 'attach', chat_id: chatId });
        await ws.waitFor('attached', (event) => event.chat_id === chatId);
        fake.enqueue({ chunks: ['First ', 'answer'] });
        const chatClient = new OpenAI({
          baseURL: `${t.httpUrl}/v1`,
          apiKey: key,
          maxRetries: 0,
          defaultHeaders: { 'X-CashCode-Chat-Id': chatId },
        });
        const first = await chatClient.chat.completions.create({ model: 'cashcode', messages: [{ role: 'user', content: 'Remember blue' }] });
        expect(first.choices[0]?.message.content).toBe('First answer');
        const done = await ws.waitFor('done', (event) => event.chat_id === chatId);
        expect(done.cancelled).toBe(false);
        // the deltas of one tick arrive as one event: compare the joined text
        expect(joinedDeltas(ws.chatEvents(chatId))).toBe('First answer');

        // the second turn's context is the chat's history, not the request's earlier messages
        fake.enqueue({ content: 'Blue.' });
        const stream = await chatClient.chat.completions.create({
          model: 'cashcode',
          messages: [{ role: 'user', content: 'ignored earlier text' }, { role: 'user', content: 'Which colour?' }],
          stream: true,
        });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
        expect(text).toBe('Blue.');
        const sent = bodyOf(fake.completions[1]).messages.map((message) => [message.role, message.content]);
        expect(sent.slice(1)).toEqual([
          ['user', 'Remember blue'],
          ['assistant', 'First answer'],
          ['user', 'Which colour?'],
        ]);

        const history = await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`);
        expect(history.status).toBe(200);
        const projection = JSON.stringify(await history.json());
        for (const text of ['Remember blue', 'First answer', 'Which colour?', 'Blue.']) expect(projection).toContain(text);
        const sessions = JSON.stringify(await (await fetch(`${t.httpUrl}/api/sessions`)).json());
        expect(sessions).toContain(chatId);
      } finally {
        await ws.close();
      }
    });

    it('Scenario: the user field maps to a chat when that setting is on', async () => {
      const chatId = chatIdForUser('alice@example.com');
      fake.enqueue({ content: 'stateless' });
      await client.chat.completions.create({ model: 'cashcode', user: 'alice@example.com', messages: [{ role: 'user', content: 'one' }] });
      expect((await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`)).status).toBe(404);

      await putSettings(t, { map_user_to_chat: true });
      try {
        fake.enqueue({ content: 'mapped' });
        const completion = await client.chat.completions.create({
          model: 'cashcode',
          user: 'alice@example.com',
          messages: [{ role: 'user', content: 'two' }],
        });
        expect(completion.choices[0]?.message.content).toBe('mapped');
        const history = await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`);
        expect(history.status).toBe(200);
        const projection = JSON.stringify(await history.json());
        expect(projection).toContain('two');
        expect(projection).toContain('mapped');
        expect(projection).not.toContain('stateless');
      } finally {
        await putSettings(t, { map_user_to_chat: false });
      }
    });

    it('Scenario: an invalid chat id header is refused', async () => {
      const response = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        headers: { 'X-CashCode-Chat-Id': '../etc' },
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(response.status).toBe(400);
      expect(await errorOf(response)).toMatchObject({ code: 'invalid_chat_id', param: 'X-CashCode-Chat-Id' });
    });

    it('Scenario: a wrong key is an authentication error', async () => {
      const wrong = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: 'cck_wrong', maxRetries: 0 });
      const error = await wrong.models.list().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
      expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    });

    it('Scenario: an unknown model is a 404 model_not_found', async () => {
      const error = await client.chat.completions
        .create({ model: 'gpt-unknown', messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
      const discovered = await client.chat.completions
        .create({ model: 'cashcode:openai_compatible/not-there', messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      expect(discovered).toBeInstanceOf(OpenAI.NotFoundError);
      expect(fake.completions).toHaveLength(0);
    });

    it('Scenario: a provider failure is a 502 upstream error', async () => {
      fake.enqueue({ status: 400, errorBody: { error: { message: 'bad things', type: 'invalid_request_error' } } });
      const error = await client.chat.completions
        .create({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((error as InstanceType<typeof OpenAI.APIError>).type).toBe('upstream_error');
    });

    it('Scenario: a bearer token is required even from loopback', async () => {
      const response = await v1(t, '/v1/models');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await errorOf(response)).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
      const post = await v1(t, '/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }] }) });
      expect(post.status).toBe(401);
      expect(fake.completions).toHaveLength(0);
    });

    it('Scenario: bad requests answer 400 in the OpenAI error format', async () => {
      const cases: Array<[string, string, string | null]> = [
        ['{"model": "cashcode", "messages": [', 'invalid_json', null],
        [JSON.stringify({ model: 'cashcode' }), 'missing_required_parameter', 'messages'],
        [JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }), 'missing_required_parameter', 'model'],
        [JSON.stringify({ model: 'cashcode', messages: 'hello' }), 'invalid_type', 'messages'],
        [JSON.stringify({ model: 'cashcode', messages: [] }), 'invalid_value', 'messages'],
        [JSON.stringify({ model: 'cashcode', messages: [{ role: 'wizard', content: 'x' }] }), 'invalid_value', 'messages[0].role'],
        [JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 42 }] }), 'invalid_type', 'messages[0].content'],
        [JSON.stringify({ model: 42, messages: [{ role: 'user', content: 'x' }] }), 'invalid_type', 'model'],
        [JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], n: 2 }), 'invalid_value', 'n'],
        [JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }), 'invalid_type', 'stream'],
        [JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], temperature: 5 }), 'invalid_value', 'temperature'],
        [
          JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }),
          'unsupported_content',
          'messages[0].content[0].type',
        ],
        ['[1, 2]', 'invalid_json', 'body'],
      ];
      for (const [body, code, param] of cases) {
        const response = await v1(t, '/v1/chat/completions', { method: 'POST', key, body });
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
        expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code, param });
      }
      expect(fake.completions).toHaveLength(0);
    });

    it('Scenario: unknown fields are ignored and n=1 is accepted', async () => {
      fake.enqueue({ content: 'fine' });
      const response = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], n: 1, frobnicate: true, tools: [], seed: 3 }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe('fine');
    });

    it('Scenario: a body over the size limit is a 413 in the OpenAI format', async () => {
      const big = 'x'.repeat(11 * 1024 * 1024);
      const response = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: big }] }),
      });
      expect(response.status).toBe(413);
      expect(await errorOf(response)).toMatchObject({ code: 'request_too_large' });
    });

    it('Scenario: unknown /v1 paths and methods answer in the OpenAI format', async () => {
      const unknown = await v1(t, '/v1/embeddings', { method: 'POST', key, body: '{}' });
      expect(unknown.status).toBe(404);
      expect(await errorOf(unknown)).toMatchObject({ code: 'unknown_url' });
      const wrongMethod = await v1(t, '/v1/chat/completions', { key });
      expect(wrongMethod.status).toBe(405);
      expect(await errorOf(wrongMethod)).toMatchObject({ code: 'method_not_allowed' });
    });

    it('Scenario: browsers may call /v1 cross-origin, but only with a key', async () => {
      const preflight = await fetch(`${t.httpUrl}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin: 'https://chat.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const keyless = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        headers: { origin: 'https://evil.example' },
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(keyless.status).toBe(401);
      fake.enqueue({ content: 'cors ok' });
      const withKey = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        headers: { origin: 'https://chat.example' },
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(withKey.status).toBe(200);
      expect(withKey.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('Scenario: a client that goes away aborts the agent run', async () => {
      fake.enqueue({ chunks: ['partial'], hangAfterChunks: true });
      const controller = new AbortController();
      const response = await v1(t, '/v1/chat/completions', {
        method: 'POST',
        key,
        signal: controller.signal,
        body: JSON.stringify({ model: 'cashcode', messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      const reader = response.body!.getReader();
      let seen = '';
      while (!seen.includes('partial')) seen += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      await fake.waitForAbort(0);
      expect(fake.completions[0]?.aborted).toBe(true);
    });

    it('Scenario: the OpenAPI document describes /v1 with OpenAI-format errors', async () => {
      const doc = (await (await fetch(`${t.httpUrl}/api/docs-json`)).json()) as {
        paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
      };
      const completions = doc.paths['/v1/chat/completions']?.['post'];
      expect(completions).toBeDefined();
      expect(doc.paths['/v1/models']?.['get']).toBeDefined();
      expect(doc.paths['/api/settings/openai-compat/keys']?.['post']).toBeDefined();
      expect(Object.keys(completions?.responses['401']?.content ?? {})).toEqual(['application/json']);
      expect(JSON.stringify(completions)).not.toContain('problem+json');
    });

    it('Scenario: a revoked key stops working at once', async () => {
      const extra = await createKey(t, 'to revoke');
      const extraClient = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: extra.secret, maxRetries: 0 });
      expect((await extraClient.models.list()).data.length).toBeGreaterThan(0);
      const revoked = await fetch(`${t.httpUrl}/api/settings/openai-compat/keys/${extra.id}`, { method: 'DELETE' });
      expect(revoked.status).toBe(204);
      await expect(extraClient.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const again = await fetch(`${t.httpUrl}/api/settings/openai-compat/keys/${extra.id}`, { method: 'DELETE' });
      expect(again.status).toBe(404);
    });
  });
});

describe('OpenAI-compatible endpoint with a server API token', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  const token = 'server-api-token-0123456789abcdef';

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_API_TOKEN: token } });
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const llm = await fetch(`${t.httpUrl}/api/settings/llm`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-test-fake-key-0123456789' }, ollama: { base_url: '' } }),
    });
    expect(llm.status).toBe(200);
    const put = await fetch(`${t.httpUrl}/api/settings/openai-compat`, { method: 'PUT', headers: auth, body: JSON.stringify({ enabled: true }) });
    expect(put.status).toBe(200);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('Scenario: the server API token is accepted as a key', async () => {
    fake.enqueue({ content: 'token ok' });
    const client = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: token, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'cashcode:openai_compatible/fake-model',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(completion.choices[0]?.message.content).toBe('token ok');
    const wrong = await fetch(`${t.httpUrl}/v1/models`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
  });
});
