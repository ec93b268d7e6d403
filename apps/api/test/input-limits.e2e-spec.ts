/**
 * Bad input is a client error: every JSON body and WebSocket frame is limited in size and nesting depth, and going
 * past a limit is a problem+json 400/413 (or a WS `error` event), never a 500; the server keeps serving.
 */
import request from 'supertest';
import { MAX_JSON_DEPTH } from '../src/common/json-limits';
import { startTestApp, type TestApp } from './support/test-app';
import { WsTestClient } from './support/ws-client';

// Parsing the attack bodies is cheap, but several requests of up to 11 MB run on a loaded 2-core runner.
jest.setTimeout(60_000);

const DEEP = 60_000;
/** `[[[…]]]` nested `depth` levels deep */
const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** `{"a":{"a":…1…}}` nested `depth` levels deep */
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
/** an object body whose `content` field holds an array; `depth` levels in total */
const deepField = (depth: number) => `{"content":${deepArray(depth - 1)}}`;

const TOO_DEEP_DETAIL = `JSON request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`;

/** Routes that take a JSON body, one per feature (POST, PUT, PATCH). */
const ROUTES: Array<{ method: 'post' | 'put' | 'patch'; path: string }> = [
  { method: 'post', path: '/api/skills' },
  { method: 'put', path: '/api/skills/some-skill' },
  { method: 'post', path: '/api/skills/some-skill/validate' },
  { method: 'put', path: '/api/memory' },
  { method: 'put', path: '/api/memory/soul' },
  { method: 'put', path: '/api/settings/llm' },
  { method: 'post', path: '/api/settings/llm/test' },
  { method: 'post', path: '/api/mcp/servers' },
  { method: 'put', path: '/api/mcp/servers/some-server' },
  { method: 'patch', path: '/api/sessions/some-chat' },
  { method: 'patch', path: '/api/skills/some-skill/enabled' },
];

describe('input limits (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const send = (method: 'post' | 'put' | 'patch', path: string, body: string) =>
    request(t.httpUrl)[method](path).set('Content-Type', 'application/json').send(body);

  describe('JSON request bodies', () => {
    it.each(ROUTES)(
      'Scenario: a JSON body nested 60,000 levels deep is a 400 problem, never a 500 ($method $path)',
      async ({ method, path }) => {
        for (const body of [deepArray(DEEP), deepObject(DEEP), deepField(DEEP)]) {
          const res = await send(method, path, body);
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body).toMatchObject({ type: 'about:blank', status: 400, detail: TOO_DEEP_DETAIL, instance: path });
          expect(res.body.requestId).toBe(res.headers['x-request-id']);
        }
      },
    );

    it('Scenario: a body at the nesting limit is parsed and validated; one level more is refused', async () => {
      // 64 levels reach the validation pipe: a 422 naming the field, not the depth error
      const atLimit = await send('put', '/api/memory', deepField(MAX_JSON_DEPTH));
      expect(atLimit.status).toBe(422);
      expect(atLimit.body.errors).toContainEqual({ field: 'content', message: 'content must be a string' });
      const atLimitObject = await send('put', '/api/memory', `{"content":"x","a":${deepObject(MAX_JSON_DEPTH - 1)}}`);
      expect(atLimitObject.status).toBe(422);
      expect(atLimitObject.body.errors).toContainEqual(expect.objectContaining({ field: 'a' }));

      const overLimit = await send('put', '/api/memory', deepField(MAX_JSON_DEPTH + 1));
      expect(overLimit.status).toBe(400);
      expect(overLimit.body.detail).toBe(TOO_DEEP_DETAIL);
    });

    it('Scenario: brackets inside strings do not count as nesting', async () => {
      const content = `${'['.repeat(5000)}{"\\"[{`;
      const hash = (await request(t.httpUrl).get('/api/memory').expect(200)).body.hash as string;
      const res = await send('put', '/api/memory', JSON.stringify({ content, hash }));
      expect(res.status).toBe(200);
      const stored = await request(t.httpUrl).get('/api/memory').expect(200);
      expect(stored.body.content).toBe(content);
    });

    it('Scenario: a deep UTF-16 body is refused as well; an unsupported charset is a 415 problem', async () => {
      // raw bytes (supertest would serialise a Buffer as JSON)
      const put = async (charset: string, body: Buffer) => {
        const res = await fetch(`${t.httpUrl}/api/memory`, {
          method: 'PUT',
          headers: { 'content-type': `application/json; charset=${charset}` },
          body,
        });
        return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Record<string, unknown> };
      };
      const deep16 = await put('utf-16le', Buffer.from(deepArray(DEEP), 'utf16le'));
      expect(deep16).toMatchObject({ status: 400, body: { detail: TOO_DEEP_DETAIL } });
      const hash = (await request(t.httpUrl).get('/api/memory').expect(200)).body.hash as string;
      const fine16 = await put('utf-16le', Buffer.from(JSON.stringify({ content: 'from utf-16', hash }), 'utf16le'));
      expect(fine16.status).toBe(200);
      const utf32 = await put('utf-32', Buffer.from('{}'));
      expect(utf32.status).toBe(415);
      expect(utf32.type).toMatch(/^application\/problem\+json/);
      expect(utf32.body).toMatchObject({ status: 415, detail: 'Unsupported request body charset' });
    });

    it('Scenario: an oversize JSON body is a 413 problem on a feature route', async () => {
      const res = await send('put', '/api/memory', JSON.stringify({ content: 'x'.repeat(11 * 1024 * 1024) }));
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 413, detail: 'Request body is too large' });
    });

    it('Scenario: after the attacks the server is unaffected', async () => {
      await Promise.all(ROUTES.map(({ method, path }) => send(method, path, deepArray(DEEP)).expect(400)));
      await request(t.httpUrl).get('/api/health').expect(200).expect((res) => expect(res.body).toMatchObject({ status: 'ok', service: 'cashcode' }));
      const hash = (await request(t.httpUrl).get('/api/memory').expect(200)).body.hash as string;
      const saved = await send('put', '/api/memory', JSON.stringify({ content: '# still works\n', hash }));
      expect(saved.status).toBe(200);
    });
  });

  describe('WebSocket frames', () => {
    let client: WsTestClient;

    beforeEach(async () => {
      client = await WsTestClient.connect(t.wsUrl);
    });

    afterEach(async () => {
      await client.close();
    });

    const TOO_DEEP_EVENT = {
      event: 'error',
      detail: `frame is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`,
      code: 'too_deep',
    };

    it.each([
      ['an array', `{"type":"ping","pad":${deepArray(DEEP)}}`],
      ['an object', `{"type":"ping","pad":${deepObject(DEEP)}}`],
      [
        'message metadata',
        `{"type":"message","chat_id":"c1","content":"hi","metadata":{"llm":${deepObject(DEEP)}}}`,
      ],
    ])(
      'Scenario: a WS frame nested 60,000 levels deep (%s) is an error event; the socket and server keep working',
      async (_kind, frame) => {
        const error = client.next('error');
        client.sendRaw(frame);
        expect(await error).toEqual(TOO_DEEP_EVENT);
        const pong = client.next('pong');
        client.send({ type: 'ping' });
        expect(await pong).toEqual({ event: 'pong' });
        expect(client.closeCode).toBeNull();
        await request(t.httpUrl).get('/api/health').expect(200);
      },
    );

    it('Scenario: a deep binary WS frame is refused the same way', async () => {
      const error = client.next('error');
      client.sendRaw(Buffer.from(`{"type":"ping","pad":${deepArray(DEEP)}}`), true);
      expect(await error).toEqual(TOO_DEEP_EVENT);
    });

    it('Scenario: a WS frame at the nesting limit is accepted', async () => {
      const pong = client.next('pong');
      client.sendRaw(`{"type":"ping","pad":${deepArray(MAX_JSON_DEPTH - 1)}}`);
      expect(await pong).toEqual({ event: 'pong' });
      expect(client.ofType('error')).toHaveLength(0);
    });
  });
});
