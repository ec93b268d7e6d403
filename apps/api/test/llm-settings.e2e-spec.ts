import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { LlmModelsResponse, PublicLlmSettings, TestLlmConnectionResponse } from '@cashcode/contracts';
import { LlmSettingsService } from '../src/llm-settings/llm-settings.service';
import { openAiClient } from '../src/llm-settings/provider-client';
import { FakeModelServer } from './support/fake-model-server';
import { SinkServer } from './support/sink-server';
import { startTestApp, type TestApp } from './support/test-app';

const KEY = 'sk-e2e-secret-key-0123456789';
const EMPTY: PublicLlmSettings = {
  configured: false,
  openai_compatible: { base_url: '', ready: false, api_key_configured: false },
  ollama: { base_url: '', ready: false },
  anthropic: { base_url: '', ready: false, api_key_configured: false },
  background: null,
};
const AUTH_MESSAGE = 'Authentication failed: check the API key.';
const TIMEOUT_MESSAGE = 'Connection timed out: check the service address and network.';
const CONNECT_MESSAGE = 'Cannot connect to the model service: check the service address.';
const BUSY_MESSAGE = 'The model service is busy: try again later.';
const GENERIC_MESSAGE = 'Connection failed: check the provider configuration.';

interface Problem {
  status: number;
  detail: string;
  errors?: Array<{ field: string; message: string }>;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('LLM settings REST (e2e)', () => {
  let fake: FakeModelServer;
  let app: TestApp;
  /** every response body seen, to check that the key never leaves the server */
  const bodies: string[] = [];

  const http = () => request(app.httpUrl);
  const seen = <T extends { text: string }>(response: T): T => {
    bodies.push(response.text);
    return response;
  };
  const put = async (body: unknown, origin?: string) => {
    const req = http().put('/api/settings/llm').send(body as object);
    return seen(await (origin ? req.set('Origin', origin) : req));
  };
  const probe = async (body: unknown, origin?: string) => {
    const req = http().post('/api/settings/llm/test').send(body as object);
    return seen(await (origin ? req.set('Origin', origin) : req));
  };
  const models = async (origin?: string) => {
    const req = http().get('/api/settings/llm/models');
    return seen(await (origin ? req.set('Origin', origin) : req));
  };
  const getSettings = async () => seen(await http().get('/api/settings/llm'));
  const openai = (extra: Record<string, unknown> = {}) => ({
    openai_compatible: { base_url: fake.baseUrl, api_key: KEY, ...extra },
    ollama: {},
  });

  beforeAll(async () => {
    fake = await FakeModelServer.start();
  });

  afterAll(async () => {
    await fake.close();
    for (const body of bodies) expect(body).not.toContain(KEY);
  });

  beforeEach(async () => {
    fake.reset();
    fake.models = ['fake-b', 'Fake-A', 'fake-b'];
    app = await startTestApp({ env: { CASHCODE_LLM_DISCOVERY_TIMEOUT_MS: '500' } });
  });

  afterEach(async () => {
    await app.close();
  });

  describe('GET and PUT /api/settings/llm', () => {
    it('Scenario: before any save the settings are all empty', async () => {
      const response = await getSettings();
      expect(response.status).toBe(200);
      expect(response.body).toEqual(EMPTY);
    });

    it('Scenario: saving writes a 0600 file in a 0700 directory and never returns the key', async () => {
      const response = await put(openai());
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        configured: true,
        openai_compatible: { base_url: fake.baseUrl, ready: true, api_key_configured: true },
        ollama: { base_url: '', ready: false },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
      const file = join(app.configDir, 'settings', 'llm.json');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(app.configDir, 'settings'))).mode & 0o777).toBe(0o700);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        version: 2,
        openai_compatible: { base_url: fake.baseUrl, api_key: KEY, api_key_origin: fake.rootUrl },
        ollama: { base_url: '' },
      });
      expect((await getSettings()).body).toEqual(response.body);
    });

    it('Scenario: the Ollama URL loses its trailing /v1 and Ollama alone is enough', async () => {
      const response = await put({ openai_compatible: {}, ollama: { base_url: ` ${fake.rootUrl}/v1/ ` } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        configured: true,
        openai_compatible: { base_url: '', ready: false, api_key_configured: false },
        ollama: { base_url: fake.rootUrl, ready: true },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
    });

    it('Scenario: a missing or blank key keeps the stored key; clear_api_key removes it', async () => {
      await put(openai());
      const kept = await put({ openai_compatible: { base_url: fake.baseUrl, api_key: '  ' }, ollama: {} });
      expect(kept.status).toBe(200);
      expect(kept.body.openai_compatible).toEqual({ base_url: fake.baseUrl, ready: true, api_key_configured: true });
      const cleared = await put({
        openai_compatible: { base_url: fake.baseUrl, clear_api_key: true },
        ollama: { base_url: fake.rootUrl },
      });
      expect(cleared.status).toBe(200);
      // without a key the connection is still ready (a keyless server)
      expect(cleared.body.openai_compatible).toEqual({ base_url: fake.baseUrl, ready: true, api_key_configured: false });
    });

    it('Scenario: every validation rule answers 422 with the field message', async () => {
      const cases: Array<[unknown, string, string]> = [
        [{ openai_compatible: { base_url: 'ftp://x', api_key: 'k' }, ollama: {} }, 'openai_compatible.base_url', 'openai_compatible.base_url must be an http or https URL'],
        [{ openai_compatible: { base_url: 'http://u:p@h.example', api_key: 'k' }, ollama: {} }, 'openai_compatible.base_url', 'openai_compatible.base_url must not contain credentials'],
        [{ openai_compatible: { base_url: 'http://h.example/?q=1', api_key: 'k' }, ollama: {} }, 'openai_compatible.base_url', 'openai_compatible.base_url must not contain query or fragment'],
        [{ openai_compatible: { base_url: `http://h.example/${'a'.repeat(2100)}`, api_key: 'k' }, ollama: {} }, 'openai_compatible.base_url', 'openai_compatible.base_url is too long'],
        [{ openai_compatible: {}, ollama: { base_url: 'localhost:11434' } }, 'ollama.base_url', 'ollama.base_url must be an http or https URL'],
        [{ openai_compatible: {}, ollama: { base_url: 11434 } }, 'ollama.base_url', 'ollama.base_url must be a string'],
        [{ openai_compatible: { base_url: null }, ollama: {} }, 'openai_compatible.base_url', 'openai_compatible.base_url must be a string'],
        [{ openai_compatible: { base_url: fake.baseUrl, api_key: 'k'.repeat(16385) }, ollama: {} }, 'openai_compatible.api_key', 'openai_compatible.api_key is too long'],
        [{ openai_compatible: { base_url: fake.baseUrl, api_key: 'sk-x', clear_api_key: true }, ollama: {} }, 'openai_compatible.api_key', 'api_key and clear_api_key cannot be submitted together'],
      ];
      for (const [body, field, message] of cases) {
        const response = await put(body);
        expect(response.status).toBe(422);
        expect(response.headers['content-type']).toContain('application/problem+json');
        const problem = response.body as Problem;
        expect(problem.detail).toBe(message);
        expect(problem.errors).toEqual([{ field, message }]);
      }
      expect((await getSettings()).body).toEqual(EMPTY);
    });

    it('Scenario: at least one provider connection is required', async () => {
      const response = await put({ openai_compatible: { base_url: '' }, ollama: { base_url: '' } });
      expect(response.status).toBe(422);
      expect((response.body as Problem).detail).toBe('at least one provider connection is required');
    });

    it('Scenario: missing objects, wrong types and unknown fields are rejected with 422', async () => {
      const bodies422: unknown[] = [
        { openai_compatible: { base_url: fake.baseUrl, api_key: KEY } },
        { ollama: {} },
        { openai_compatible: 'x', ollama: {} },
        { ...openai(), extra: 1 },
        { openai_compatible: { base_url: fake.baseUrl, api_key: KEY, model: 'm' }, ollama: {} },
        { openai_compatible: { base_url: fake.baseUrl, api_key: KEY }, ollama: { base_url: '', active: true } },
        { openai_compatible: { base_url: fake.baseUrl, api_key: 42 }, ollama: {} },
        { openai_compatible: { base_url: fake.baseUrl, api_key: KEY, clear_api_key: 'no' }, ollama: {} },
      ];
      for (const body of bodies422) {
        const response = await put(body);
        expect(response.status).toBe(422);
        expect((response.body as Problem).errors?.length).toBeGreaterThan(0);
      }
      expect((await getSettings()).body).toEqual(EMPTY);
    });

    it('Scenario: a corrupt settings file makes GET and /models answer 503 until a PUT succeeds', async () => {
      await app.close();
      const configDir = await mkdtemp(join(tmpdir(), 'cc-llm-corrupt-'));
      try {
        await mkdir(join(configDir, 'settings'), { recursive: true });
        await writeFile(join(configDir, 'settings', 'llm.json'), `{"version": 2, "openai_compatible": {"api_key": "${KEY}"`);
        app = await startTestApp({ configDir });
        const response = await getSettings();
        expect(response.status).toBe(503);
        expect((response.body as Problem).detail).toBe('the LLM settings file is invalid or unreadable');
        expect((await models()).status).toBe(503);
        expect((await put(openai())).status).toBe(200);
        expect((await getSettings()).status).toBe(200);
      } finally {
        await app.close();
        await rm(configDir, { recursive: true, force: true });
      }
    });

    it('Scenario: a saved file is loaded again after a restart', async () => {
      await app.close();
      const configDir = await mkdtemp(join(tmpdir(), 'cc-llm-restart-'));
      try {
        app = await startTestApp({ configDir });
        const saved = (await put(openai())).body as PublicLlmSettings;
        await app.close();
        app = await startTestApp({ configDir });
        expect((await getSettings()).body).toEqual(saved);
      } finally {
        await app.close();
        await rm(configDir, { recursive: true, force: true });
      }
    });

    it('Scenario: DEEPSEEK_API_KEY is migrated at startup when no settings file exists', async () => {
      await app.close();
      app = await startTestApp({ env: { DEEPSEEK_API_KEY: KEY, DEEPSEEK_API_BASE: fake.baseUrl } });
      expect((await getSettings()).body).toEqual({
        configured: true,
        openai_compatible: { base_url: fake.baseUrl, ready: true, api_key_configured: true },
        ollama: { base_url: '', ready: false },
        anthropic: { base_url: '', ready: false, api_key_configured: false },
        background: null,
      });
      const file = JSON.parse(await readFile(join(app.configDir, 'settings', 'llm.json'), 'utf8')) as unknown;
      expect(file).toEqual({
        version: 2,
        openai_compatible: { base_url: fake.baseUrl, api_key: KEY, api_key_origin: fake.rootUrl },
        ollama: { base_url: '' },
      });
    });
  });

  describe('Origin check', () => {
    const EVIL = 'http://evil.example';

    it('Scenario: PUT, POST /test and GET /models from a foreign Origin answer 403 before anything else', async () => {
      for (const response of [
        await put({ not: 'even valid' }, EVIL),
        await probe({ ...openai(), provider: 'openai_compatible' }, EVIL),
        await models(EVIL),
      ]) {
        expect(response.status).toBe(403);
        expect((response.body as Problem).detail).toBe('Origin is not allowed');
      }
      expect(fake.requests).toHaveLength(0);
      expect((await getSettings()).body).toEqual(EMPTY);
    });

    it('Scenario: GET /api/settings/llm has no Origin check; allowed or absent Origins pass', async () => {
      expect((await seen(await http().get('/api/settings/llm').set('Origin', 'http://evil.example'))).status).toBe(200);
      expect((await put(openai(), `http://localhost:${app.config.port}`)).status).toBe(200);
      expect((await models(`http://127.0.0.1:${app.config.port}`)).status).toBe(200);
      expect((await models()).status).toBe(200);
    });
  });

  describe('POST /api/settings/llm/test', () => {
    it('Scenario: a successful probe counts de-duplicated models and persists nothing', async () => {
      const response = await probe({ ...openai(), provider: 'openai_compatible' });
      expect(response.status).toBe(200);
      expect(response.body as TestLlmConnectionResponse).toEqual({
        success: true,
        provider: 'openai_compatible',
        model_count: 2,
        message: 'Connected: found 2 models',
        models: expect.arrayContaining(['Fake-A', 'fake-b']) as unknown as string[],
      });
      expect((response.body as TestLlmConnectionResponse).models).toHaveLength(2);
      expect(fake.requests.map((r) => r.path)).toEqual(['/v1/models']);
      expect(fake.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
      expect((await getSettings()).body).toEqual(EMPTY);
      await expect(stat(join(app.configDir, 'settings', 'llm.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('Scenario: Ollama is probed at <base>/v1/models with the ollama-local key', async () => {
      const response = await probe({ openai_compatible: {}, ollama: { base_url: `${fake.rootUrl}/v1/` }, provider: 'ollama' });
      expect(response.status).toBe(200);
      expect(response.body.model_count).toBe(2);
      expect(fake.requests[0].path).toBe('/v1/models');
      expect(fake.requests[0].headers.authorization).toBe('Bearer ollama-local');
    });

    it('Scenario: the draft keeps the stored key when none is submitted', async () => {
      await put(openai());
      fake.reset();
      fake.models = ['m1'];
      const response = await probe({ openai_compatible: { base_url: fake.baseUrl }, ollama: {}, provider: 'openai_compatible' });
      expect(response.status).toBe(200);
      expect(response.body.message).toBe('Connected: found 1 models');
      expect(fake.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    });

    it('Scenario: a provider that is not ready in the draft answers 422, never 500', async () => {
      const noUrl = await probe({ openai_compatible: { base_url: '' }, ollama: {}, provider: 'openai_compatible' });
      expect(noUrl.status).toBe(422);
      expect((noUrl.body as Problem).detail).toBe('openai_compatible is not ready: a base URL is required to test the connection');
      expect((noUrl.body as Problem).errors?.[0].field).toBe('openai_compatible.base_url');
      const noOllama = await probe({ ...openai(), provider: 'ollama' });
      expect(noOllama.status).toBe(422);
      expect((noOllama.body as Problem).detail).toBe('ollama is not ready: a base URL is required to test the connection');
      expect(fake.requests).toHaveLength(0);
    });

    it('Scenario: the probe body is validated like PUT plus the provider', async () => {
      const badProvider = await probe({ ...openai(), provider: 'gemini' });
      expect(badProvider.status).toBe(422);
      expect((badProvider.body as Problem).errors).toEqual([
        { field: 'provider', message: 'must be one of: openai_compatible, ollama, anthropic' },
      ]);
      const badUrl = await probe({ openai_compatible: { base_url: 'nope', api_key: KEY }, ollama: {}, provider: 'openai_compatible' });
      expect(badUrl.status).toBe(422);
      expect((badUrl.body as Problem).detail).toBe('openai_compatible.base_url must be an http or https URL');
      const conflict = await probe({ ...openai({ clear_api_key: true }), provider: 'openai_compatible' });
      expect(conflict.status).toBe(422);
      expect((conflict.body as Problem).detail).toBe('api_key and clear_api_key cannot be submitted together');
    });

    it('Scenario: a 401 from the model answers 400 with the authentication message and no provider text', async () => {
      fake.modelsStep = { status: 401, errorBody: { error: { message: `Incorrect API key provided: ${KEY}` } } };
      const response = await probe({ ...openai(), provider: 'openai_compatible' });
      expect(response.status).toBe(400);
      expect((response.body as Problem).detail).toBe(AUTH_MESSAGE);
      expect(response.body).toMatchObject({ code: 'connection_failed', reason: 'auth' });
      expect(response.text).not.toContain('Incorrect');
      expect(response.text).not.toContain(fake.baseUrl);
    });

    it('Scenario: 429 answers busy and 500 answers the generic message', async () => {
      fake.modelsStep = { status: 429 };
      const busy = await probe({ ...openai(), provider: 'openai_compatible' });
      expect(busy.body).toMatchObject({ detail: BUSY_MESSAGE, reason: 'rate_limit' });
      fake.modelsStep = { status: 500 };
      const response = await probe({ ...openai(), provider: 'openai_compatible' });
      expect(response.status).toBe(400);
      expect((response.body as Problem).detail).toBe(GENERIC_MESSAGE);
      expect(response.body).toMatchObject({ reason: 'probe_generic' });
    });

    it('Scenario: a model server that never answers times out', async () => {
      fake.modelsStep = { hang: true };
      const response = await probe({ ...openai(), provider: 'openai_compatible' });
      expect(response.status).toBe(400);
      expect((response.body as Problem).detail).toBe(TIMEOUT_MESSAGE);
      expect(response.body).toMatchObject({ reason: 'timeout' });
    });

    it('Scenario: nothing listening answers cannot connect', async () => {
      const port = await closedPort();
      const response = await probe({
        openai_compatible: { base_url: `http://127.0.0.1:${port}/v1`, api_key: KEY },
        ollama: {},
        provider: 'openai_compatible',
      });
      expect(response.status).toBe(400);
      expect((response.body as Problem).detail).toBe(CONNECT_MESSAGE);
      expect(response.body).toMatchObject({ reason: 'connection' });
    });
  });

  describe('GET /api/settings/llm/models', () => {
    it('Scenario: nothing saved lists no models and no errors', async () => {
      const response = await models();
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        models: [],
        providers: { openai_compatible: { ready: false, error: null }, ollama: { ready: false, error: null }, anthropic: { ready: false, error: null } },
      });
    });

    it('Scenario: both saved providers are listed, de-duplicated and sorted (fake-b, Fake-A, fake-b → Fake-A, fake-b)', async () => {
      await put({ openai_compatible: { base_url: fake.baseUrl, api_key: KEY }, ollama: { base_url: fake.rootUrl } });
      const response = await models();
      expect(response.status).toBe(200);
      expect(response.body as LlmModelsResponse).toEqual({
        models: [
          { provider: 'openai_compatible', id: 'Fake-A' },
          { provider: 'openai_compatible', id: 'fake-b' },
          { provider: 'ollama', id: 'Fake-A' },
          { provider: 'ollama', id: 'fake-b' },
        ],
        providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: true, error: null }, anthropic: { ready: false, error: null } },
      });
    });

    it('Scenario: a failing provider contributes no models and a sanitised error', async () => {
      const failing = await FakeModelServer.start();
      try {
        failing.modelsStep = { status: 401 };
        await put({ openai_compatible: { base_url: failing.baseUrl, api_key: KEY }, ollama: { base_url: fake.rootUrl } });
        const response = await models();
        expect(response.status).toBe(200);
        expect(response.body as LlmModelsResponse).toEqual({
          models: [
            { provider: 'ollama', id: 'Fake-A' },
            { provider: 'ollama', id: 'fake-b' },
          ],
          providers: { openai_compatible: { ready: true, error: AUTH_MESSAGE }, ollama: { ready: true, error: null }, anthropic: { ready: false, error: null } },
        });
      } finally {
        await failing.close();
      }
    });
  });

  describe('API key origin binding', () => {
    const NEW_KEY = 'sk-e2e-new-key-for-origin-b-4242';
    const MOVED = 'The base URL moved to another origin; enter the API key for it again (or clear the stored key)';
    let a: SinkServer;
    let b: SinkServer;
    const settingsFile = () => join(app.configDir, 'settings', 'llm.json');
    const movedProblem = (response: request.Response) => {
      expect(response.status).toBe(422);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(response.body as Problem).toMatchObject({ detail: MOVED, errors: [{ field: 'openai_compatible.api_key', message: MOVED }] });
    };
    /** stores KEY for origin A (the sink `a`) and forgets the requests so far */
    const storeKeyOnA = async () => {
      expect((await put({ openai_compatible: { base_url: `${a.origin}/v1`, api_key: KEY }, ollama: {} })).status).toBe(200);
      a.reset();
    };

    beforeAll(async () => {
      a = await SinkServer.start();
      b = await SinkServer.start();
    });

    afterAll(async () => {
      await a.close();
      await b.close();
    });

    beforeEach(() => {
      a.reset();
      b.reset();
    });

    afterEach(() => {
      // origin B never receives the key stored for origin A, whatever the test did
      expect(b.sawHeaderValue(KEY)).toBe(false);
    });

    it('Scenario: a PUT that moves the base URL to another origin without a key is refused and changes nothing', async () => {
      await storeKeyOnA();
      const fileBefore = await readFile(settingsFile(), 'utf8');
      const settingsBefore = (await getSettings()).body as PublicLlmSettings;
      // 127.0.0.1 and localhost on the same port, and http vs https, are other origins too
      const elsewhere = [`${b.origin}/v1`, `${b.localhostOrigin}/v1`, `${a.localhostOrigin}/v1`, `https://127.0.0.1:${a.port}/v1`];
      for (const base_url of elsewhere) {
        for (const keyFields of [{}, { api_key: null }, { api_key: '   ' }, { clear_api_key: false }]) {
          movedProblem(await put({ openai_compatible: { base_url, ...keyFields }, ollama: {} }));
        }
      }
      expect(await readFile(settingsFile(), 'utf8')).toBe(fileBefore);
      expect((await getSettings()).body).toEqual(settingsBefore);
      expect(a.requests).toHaveLength(0);
      expect(b.requests).toHaveLength(0);
    });

    it('Scenario: /test with a base URL on another origin and no key answers 422 and sends nothing', async () => {
      await storeKeyOnA();
      const fileBefore = await readFile(settingsFile(), 'utf8');
      for (const base_url of [`${b.origin}/v1`, `${a.localhostOrigin}/v1`]) {
        movedProblem(await probe({ openai_compatible: { base_url }, ollama: {}, provider: 'openai_compatible' }));
      }
      expect(a.requests).toHaveLength(0);
      expect(b.requests).toHaveLength(0);
      expect(await readFile(settingsFile(), 'utf8')).toBe(fileBefore);
    });

    it('Scenario: with a new key the other origin sees only the new key', async () => {
      await storeKeyOnA();
      const draft = { openai_compatible: { base_url: `${b.origin}/v1`, api_key: NEW_KEY }, ollama: {} };
      expect((await probe({ ...draft, provider: 'openai_compatible' })).status).toBe(200);
      expect((await put(draft)).status).toBe(200);
      const listed = await models();
      expect(listed.body as LlmModelsResponse).toEqual({
        models: [{ provider: 'openai_compatible', id: 'sink-model' }],
        providers: { openai_compatible: { ready: true, error: null }, ollama: { ready: false, error: null }, anthropic: { ready: false, error: null } },
      });
      expect(b.authorizations).toEqual([`Bearer ${NEW_KEY}`, `Bearer ${NEW_KEY}`]);
      expect(a.requests).toHaveLength(0);
      expect(JSON.parse(await readFile(settingsFile(), 'utf8'))).toMatchObject({
        openai_compatible: { base_url: `${b.origin}/v1`, api_key: NEW_KEY, api_key_origin: b.origin },
      });
    });

    it('Scenario: clearing the key while moving to another origin sends no key', async () => {
      await storeKeyOnA();
      const cleared = await put({ openai_compatible: { base_url: `${b.origin}/v1`, clear_api_key: true }, ollama: { base_url: fake.rootUrl } });
      expect(cleared.status).toBe(200);
      expect(cleared.body.openai_compatible).toEqual({ base_url: `${b.origin}/v1`, ready: true, api_key_configured: false });
      expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
      const noKey = await probe({ openai_compatible: { base_url: `${b.origin}/v1` }, ollama: {}, provider: 'openai_compatible' });
      expect(noKey.status).toBe(200);
      // the other origin is reached without any key
      expect(b.requests.length).toBeGreaterThan(0);
      expect(b.requests.map((r) => r.headers.authorization)).toEqual(b.requests.map(() => undefined));
    });

    it('Scenario: spellings of the same origin and path-only changes keep the key', async () => {
      await storeKeyOnA();
      const sameOrigin: Array<[string, string]> = [
        [`${a.origin}/proxy/v1`, '/proxy/v1/models'],
        [`HTTP://127.0.0.1.:${a.port}/other/`, '/other/models'],
        [`http://127.0.0.1:${a.port}`, '/models'],
      ];
      for (const [base_url, path] of sameOrigin) {
        a.reset();
        const response = await probe({ openai_compatible: { base_url }, ollama: {}, provider: 'openai_compatible' });
        expect([base_url, response.status]).toEqual([base_url, 200]);
        expect(a.requests.map((r) => [r.path, r.headers.authorization])).toEqual([[path, `Bearer ${KEY}`]]);
      }
      a.reset();
      expect((await put({ openai_compatible: { base_url: `${a.origin}/proxy/v1` }, ollama: {} })).status).toBe(200);
      expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
      expect(a.requests.map((r) => [r.path, r.headers.authorization])).toEqual([['/proxy/v1/models', `Bearer ${KEY}`]]);
    });

    it('Scenario: model discovery never sends a key bound to another origin (a settings file edited by hand)', async () => {
      await app.close();
      const configDir = await mkdtemp(join(tmpdir(), 'cc-llm-bound-'));
      try {
        await mkdir(join(configDir, 'settings'), { recursive: true });
        const text = JSON.stringify({
          version: 2,
          openai_compatible: { base_url: `${b.origin}/v1`, api_key: KEY, api_key_origin: a.origin },
          ollama: { base_url: '' },
        });
        await writeFile(join(configDir, 'settings', 'llm.json'), text);
        app = await startTestApp({ configDir });
        expect((await getSettings()).body.openai_compatible).toEqual({ base_url: `${b.origin}/v1`, ready: true, api_key_configured: false });
        // listed without the key: the key bound to the other origin never goes there
        expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
        expect(b.requests.map((r) => r.headers.authorization)).toEqual([undefined]);
        b.reset();
        movedProblem(await probe({ openai_compatible: { base_url: `${b.origin}/v1` }, ollama: {}, provider: 'openai_compatible' }));
        movedProblem(await put({ openai_compatible: { base_url: `${b.origin}/v1` }, ollama: {} }));
        expect(await readFile(join(configDir, 'settings', 'llm.json'), 'utf8')).toBe(text);
        expect(b.requests).toHaveLength(0);
      } finally {
        await app.close();
        await rm(configDir, { recursive: true, force: true });
      }
    });

    it('Scenario: a key stored without an origin is bound to the base URL it was stored with', async () => {
      await app.close();
      const configDir = await mkdtemp(join(tmpdir(), 'cc-llm-legacy-'));
      try {
        await mkdir(join(configDir, 'settings'), { recursive: true });
        const text = JSON.stringify({ version: 2, openai_compatible: { base_url: `${a.origin}/v1`, api_key: KEY }, ollama: { base_url: '' } });
        await writeFile(join(configDir, 'settings', 'llm.json'), text);
        app = await startTestApp({ configDir });
        expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
        expect(a.authorizations).toEqual([`Bearer ${KEY}`]);
        movedProblem(await put({ openai_compatible: { base_url: `${b.origin}/v1` }, ollama: {} }));
        expect(await readFile(join(configDir, 'settings', 'llm.json'), 'utf8')).toBe(text);
        expect(b.requests).toHaveLength(0);
      } finally {
        await app.close();
        await rm(configDir, { recursive: true, force: true });
      }
    });

    it('Scenario: a redirect to another origin does not carry the key', async () => {
      // A → B (localhost, another port): B answers the model list but never sees the key
      a.respond = (req) =>
        req.path === '/v1/models' ? { status: 307, headers: { location: `${b.localhostOrigin}/v1/models` } } : undefined;
      const tested = await probe({ ...openai({ base_url: `${a.origin}/v1` }), provider: 'openai_compatible' });
      expect(tested.status).toBe(200);
      expect(a.authorizations).toEqual([`Bearer ${KEY}`]);
      expect(b.requests.map((r) => [r.path, r.headers.authorization])).toEqual([['/v1/models', undefined]]);

      // saved settings and model discovery: a 302 to 127.0.0.1 on B's port, and A → B → A, which must not restore it
      a.reset();
      b.reset();
      a.respond = (req) => (req.path === '/v1/models' ? { status: 302, headers: { location: `${b.origin}/bounce` } } : undefined);
      b.respond = (req) => (req.path === '/bounce' ? { status: 302, headers: { location: `${a.origin}/back/models` } } : undefined);
      expect((await put(openai({ base_url: `${a.origin}/v1` }))).status).toBe(200);
      expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
      expect(a.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
        ['/v1/models', `Bearer ${KEY}`],
        ['/back/models', undefined],
      ]);
      expect(b.requests.map((r) => [r.path, r.headers.authorization])).toEqual([['/bounce', undefined]]);

      // a redirect within the origin keeps it (fetch semantics)
      a.reset();
      a.respond = (req) => (req.path === '/v1/models' ? { status: 308, headers: { location: '/v2/models' } } : undefined);
      expect((await models()).body.providers.openai_compatible).toEqual({ ready: true, error: null });
      expect(a.authorizations).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    });
  });

  describe('provider clients', () => {
    it('Scenario: a lease keeps its client across a PUT; new leases get the new client', async () => {
      const second = await FakeModelServer.start();
      try {
        const service = app.app.get(LlmSettingsService);
        await put(openai());
        const oldLease = service.acquire('openai_compatible');
        // another origin: the key has to be entered again for it
        await put({ openai_compatible: { base_url: second.baseUrl, api_key: KEY }, ollama: {} });
        const newLease = service.acquire('openai_compatible');
        expect(newLease.generation).toBeGreaterThan(oldLease.generation);

        await openAiClient(oldLease.client).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
        await openAiClient(newLease.client).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
        expect(fake.completions).toHaveLength(1);
        expect(second.completions).toHaveLength(1);
        expect(second.completions[0].headers.authorization).toBe(`Bearer ${KEY}`);

        expect(service.openGenerations()).toContain(oldLease.generation);
        oldLease.release();
        expect(service.openGenerations()).not.toContain(oldLease.generation);
        newLease.release();
      } finally {
        await second.close();
      }
    });
  });

  it('Scenario: the OpenAPI document describes every LLM settings route', async () => {
    const response = await http().get('/api/docs-json');
    expect(response.status).toBe(200);
    const paths = (response.body as { paths: Record<string, Record<string, { tags?: string[]; responses: object }>> }).paths;
    expect(Object.keys(paths['/api/settings/llm']).sort()).toEqual(['get', 'put']);
    expect(paths['/api/settings/llm']['put'].responses).toHaveProperty('422');
    expect(paths['/api/settings/llm/test']['post'].responses).toHaveProperty('400');
    expect(paths['/api/settings/llm/models']['get'].tags).toEqual(['llm-settings']);
  });
});
