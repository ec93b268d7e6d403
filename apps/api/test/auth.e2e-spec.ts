import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { PlatformProbeModule } from './support/platform-probe';
import { rawRequest, rawUpgrade } from './support/raw-http';
import { REPO_ROOT, startTestApp, type TestApp } from './support/test-app';

// Several apps start in this file: generous limits for a loaded 2-core runner.
jest.setTimeout(60_000);

const TOKEN = 'auth-test-token-0123456789';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const WRONG = { Authorization: 'Bearer wrong-token-0123456789' };
const probe = (config: Parameters<typeof PlatformProbeModule.forRoot>[0]) => PlatformProbeModule.forRoot(config);

/** Spellings of GET /api/settings/llm and GET /api/sessions that the router must not (or, last two, does) route. */
const ODD_SPELLINGS = [
  '/API/settings/llm',
  '/Api/sessions',
  '/api/SETTINGS/llm',
  '/api//settings/llm',
  '//api/settings/llm',
  '/%61pi/settings/llm',
  '/%2561pi/settings/llm',
  '/api/settings/%6Clm',
  '/api/settings/llm//',
  '/api/settings/llm%2F',
  '/api/settings/./llm',
  '/api/health/../settings/llm',
  '/api/docs/../settings/llm',
  '/api/health/%2E%2E/settings/llm',
];
/** Spellings the router treats as the route itself (one trailing slash, absolute-form target). */
const ROUTED_SPELLINGS = ['/api/settings/llm', '/api/settings/llm/'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const OLLAMA_ONLY = JSON.stringify({ openai_compatible: {}, ollama: { base_url: 'http://127.0.0.1:11434' } });

function expectUnauthorized(res: { status: number; headers: Record<string, unknown>; body: string }, method: string, target: string): void {
  if (res.status !== 401) throw new Error(`${method} ${target}: expected 401, got ${res.status} ${res.body.slice(0, 200)}`);
  expect(res.headers['www-authenticate']).toBe('Bearer');
  if (method !== 'HEAD') {
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.body)).toMatchObject({ status: 401, detail: 'Authentication required: a valid API token is missing' });
  }
}

describe('API token on the full application', () => {
  let t: TestApp;
  let consoleDir: string;
  const settingsFile = () => join(t.configDir, 'settings', 'llm.json');

  beforeAll(async () => {
    consoleDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-console-'));
    await fs.writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>console</title><app-root></app-root>');
    await fs.writeFile(join(consoleDir, 'main.js'), 'window.cashcodeFixture = 1;');
    t = await startTestApp({ env: { CASHCODE_API_TOKEN: TOKEN, CASHCODE_CONSOLE_DIR: consoleDir } });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(consoleDir, { recursive: true, force: true });
  });

  it('Scenario: every spelling of a protected route needs the token, and only the routed spelling answers', async () => {
    for (const target of [...ODD_SPELLINGS, ...ROUTED_SPELLINGS, `http://127.0.0.1:${t.config.port}/api/settings/llm`]) {
      expectUnauthorized(await rawRequest(t.httpUrl, 'GET', target), 'GET', target);
      expectUnauthorized(await rawRequest(t.httpUrl, 'GET', target, WRONG), 'GET (wrong token)', target);
    }
    for (const target of [...ROUTED_SPELLINGS, `http://127.0.0.1:${t.config.port}/api/settings/llm`]) {
      const res = await rawRequest(t.httpUrl, 'GET', target, BEARER);
      expect({ target, status: res.status }).toEqual({ target, status: 200 });
      expect(JSON.parse(res.body)).toHaveProperty('configured', false);
    }
    for (const target of ODD_SPELLINGS) {
      const res = await rawRequest(t.httpUrl, 'GET', target, { ...BEARER, Accept: 'text/html' });
      // never the settings and never the console's page: the one spelling of the route is the routed one
      expect({ target, status: res.status }).toEqual({ target, status: 404 });
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).not.toContain('configured');
      expect(res.body).not.toContain('<app-root>');
    }
  });

  it('Scenario: every method needs the token; HEAD and OPTIONS are no way around it', async () => {
    const targets = [...ODD_SPELLINGS, ...ROUTED_SPELLINGS, '/api/sessions', '/api/settings/llm/test', '/api/health', '/api/docs'];
    for (const method of METHODS) {
      for (const target of targets) {
        // GET/HEAD of the exact open routes are the only requests that need no token
        if ((method === 'GET' || method === 'HEAD') && (target === '/api/health' || target === '/api/docs')) continue;
        const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
        const res = await rawRequest(
          t.httpUrl,
          method,
          target,
          hasBody ? { 'Content-Type': 'application/json' } : {},
          hasBody ? OLLAMA_ONLY : undefined,
        );
        expectUnauthorized(res, method, target);
      }
    }
    // a cross-origin preflight still gets its CORS answer (browsers never send credentials on one)
    const preflight = await rawRequest(t.httpUrl, 'OPTIONS', '/api/settings/llm', {
      Origin: `http://127.0.0.1:${t.config.port}`,
      'Access-Control-Request-Method': 'PUT',
    });
    expect(preflight.status).toBe(200);
    expect(preflight.body).toBe('');
    // state-changing calls at odd spellings change nothing, even with the token
    for (const target of ODD_SPELLINGS) {
      for (const method of ['PUT', 'POST']) {
        const res = await rawRequest(t.httpUrl, method, target, { ...BEARER, 'Content-Type': 'application/json' }, OLLAMA_ONLY);
        expect({ method, target, status: res.status }).toEqual({ method, target, status: 404 });
      }
    }
    expect(existsSync(settingsFile())).toBe(false);
    const saved = await rawRequest(t.httpUrl, 'PUT', '/api/settings/llm', { ...BEARER, 'Content-Type': 'application/json' }, OLLAMA_ONLY);
    expect(saved.status).toBe(200);
    expect(existsSync(settingsFile())).toBe(true);
  });

  it('Scenario: an unknown path without a token is 401, not 404', async () => {
    for (const target of ['/api/nothing/here', '/api', '/API', '/missing.js', '/ws', '/WS/x', '/%2Fapi/x', '/%E0%A4%A']) {
      expectUnauthorized(await rawRequest(t.httpUrl, 'GET', target, { Accept: 'text/html' }), 'GET', target);
    }
    const known = await rawRequest(t.httpUrl, 'GET', '/api/nothing/here', BEARER);
    expect(known.status).toBe(404);
    expect((await rawRequest(t.httpUrl, 'GET', '/missing.js', BEARER)).status).toBe(404);
  });

  it('Scenario: the console, health, client config and the API docs stay open', async () => {
    const root = await request(t.httpUrl).get('/').expect(200);
    expect(root.text).toContain('<app-root>');
    await request(t.httpUrl).get('/main.js').expect(200);
    const deep = await request(t.httpUrl).get('/chat/abc').set('Accept', 'text/html').expect(200);
    expect(deep.text).toContain('<app-root>');
    await request(t.httpUrl).get('/api/health').expect(200).expect((res) => expect(res.body).toMatchObject({ status: 'ok', service: 'cashcode' }));
    await request(t.httpUrl).head('/api/health/').expect(200);
    const clientConfig = await request(t.httpUrl).get('/api/client-config').expect(200);
    expect(clientConfig.body.token_required).toBe(true);
    const ui = await request(t.httpUrl).get('/api/docs').expect(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
    // the Swagger UI's own assets load without a token (a browser cannot send one when navigating)
    const assets = [...ui.text.matchAll(/(?:src|href)="\.?\/?([^"]+\.(?:js|css|png))"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      const target = asset.startsWith('/') ? asset : `/api/${asset.startsWith('docs/') ? asset : `docs/${asset}`}`;
      const res = await rawRequest(t.httpUrl, 'GET', target);
      expect({ target, status: res.status }).toEqual({ target, status: 200 });
    }
    const doc = await request(t.httpUrl).get('/api/docs-json').expect(200);
    expect(doc.body.paths).toHaveProperty('/api/settings/llm');
    // open means GET/HEAD of the exact route: other spellings and methods of it need the token
    for (const [method, target] of [
      ['GET', '/API/health'],
      ['GET', '/api/%68ealth'],
      ['GET', '/api//health'],
      ['POST', '/api/health'],
      ['DELETE', '/api/client-config'],
      ['POST', '/api/docs'],
    ]) {
      expectUnauthorized(await rawRequest(t.httpUrl, method, target), method, target);
    }
  });

  it('Scenario: a WS upgrade at any spelling of a path needs the token', async () => {
    const port = t.config.port;
    for (const target of ['/ws', '/ws/', '/WS', '/Ws', '//ws', '/%77s', '/ws//', '/api/settings/llm', `/ws?token=wrong-token-0123456789`]) {
      const refused = await rawUpgrade(t.httpUrl, target, { Origin: `http://127.0.0.1:${port}` });
      expect({ target, refused }).toMatchObject({ target, refused: { opened: false, status: 401 } });
      if (!refused.opened) expect(refused.headers['www-authenticate']).toBe('Bearer');
    }
    for (const target of ['/WS', '/Ws', '//ws', '/%77s', '/ws//', '/api/settings/llm']) {
      const wrongPath = await rawUpgrade(t.httpUrl, `${target}?token=${TOKEN}`);
      expect({ target, wrongPath }).toMatchObject({ target, wrongPath: { opened: false, status: 404 } });
    }
    expect(await rawUpgrade(t.httpUrl, `/ws?token=${TOKEN}`)).toEqual({ opened: true });
    expect(await rawUpgrade(t.httpUrl, '/ws', BEARER)).toEqual({ opened: true });
  });
});

describe('API token: the gateway on its own port', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ module: probe, env: { CASHCODE_API_TOKEN: TOKEN }, configOverrides: { wsSharesHttp: false } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: a WS upgrade at any spelling of a path needs the token', async () => {
    const wsBase = `http://127.0.0.1:${t.config.wsPort}`;
    for (const target of ['/', '/anything', '/WS', '//x', '/%77s', `http://127.0.0.1:${t.config.wsPort}/`]) {
      expect(await rawUpgrade(wsBase, target)).toMatchObject({ opened: false, status: 401 });
      expect(await rawUpgrade(wsBase, target, WRONG)).toMatchObject({ opened: false, status: 401 });
      expect(await rawUpgrade(wsBase, target, BEARER)).toEqual({ opened: true });
    }
  });
});

describe('Failed-token throttle', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ module: probe, env: { CASHCODE_API_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: twenty wrong tokens throttle further wrong ones, never the right token', async () => {
    for (let i = 0; i < 20; i++) {
      await request(t.httpUrl).get('/api/probe/items/1').set('Authorization', `Bearer wrong-${i}-0123456789`).expect(401);
    }
    const throttled = await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).expect(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(throttled.body).toMatchObject({ status: 429 });
    await request(t.httpUrl).get('/api/probe/items/1').expect(429);
    // the right token still works, on REST and on the upgrade
    for (let i = 0; i < 3; i++) {
      await request(t.httpUrl).get('/api/probe/items/1').set(BEARER).expect(200, { id: '1' });
    }
    await request(t.httpUrl).post('/api/probe/items').set(BEARER).send({ name: 'a', count: 1 }).expect(201);
    expect(await rawUpgrade(t.httpUrl, `/ws?token=${TOKEN}`)).toEqual({ opened: true });
    expect(await rawUpgrade(t.httpUrl, '/ws?token=wrong-token-0123456789')).toMatchObject({ opened: false, status: 429 });
    // open routes stay open
    await request(t.httpUrl).get('/api/health').expect(200);
  });

  it('Scenario: X-Forwarded-For from an untrusted peer is ignored', async () => {
    // the previous scenario put 127.0.0.1 over the limit: a forged header does not make it a new client
    for (const forged of ['203.0.113.9', '203.0.113.10, 198.51.100.1', '::1']) {
      await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', forged).expect(429);
    }
  });
});

describe('Failed-token throttle with a proxy that is not trusted', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ module: probe, env: { CASHCODE_API_TOKEN: TOKEN, CASHCODE_TRUSTED_PROXIES: '10.0.0.0/8' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: X-Forwarded-For from an untrusted peer is ignored', async () => {
    for (let i = 0; i < 20; i++) {
      await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', `203.0.113.${i}`).expect(401);
    }
    await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', '198.51.100.77').expect(429);
    expect(await rawUpgrade(t.httpUrl, '/ws?token=nope-0123456789', { 'X-Forwarded-For': '198.51.100.78' })).toMatchObject({
      opened: false,
      status: 429,
    });
  });
});

describe('Failed-token throttle behind a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ module: probe, env: { CASHCODE_API_TOKEN: TOKEN, CASHCODE_TRUSTED_PROXIES: '127.0.0.1, ::1' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: behind a trusted proxy each client is throttled on its own', async () => {
    const alice = '203.0.113.5';
    const bob = '198.51.100.6';
    for (let i = 0; i < 20; i++) {
      // what alice wrote into the header herself (left of the proxy's entry) does not change who she is
      await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', `10.9.9.${i}, ${alice}`).expect(401);
    }
    await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', alice).expect(429);
    await request(t.httpUrl).get('/api/probe/items/1').set(WRONG).set('X-Forwarded-For', bob).expect(401);
    await request(t.httpUrl).get('/api/probe/items/1').set(BEARER).set('X-Forwarded-For', alice).expect(200);
    // the WebSocket handshake keys clients the same way
    expect(await rawUpgrade(t.httpUrl, '/ws?token=nope-0123456789', { 'X-Forwarded-For': alice })).toMatchObject({
      opened: false,
      status: 429,
    });
    expect(await rawUpgrade(t.httpUrl, '/ws?token=nope-0123456789', { 'X-Forwarded-For': bob })).toMatchObject({
      opened: false,
      status: 401,
    });
  });

  it('Scenario: a bad CASHCODE_TRUSTED_PROXIES entry stops the boot with a readable message', () => {
    for (const bad of ['proxy.internal', '10.0.0.0/40', '127.1']) {
      expect(() => loadConfig({ CASHCODE_TRUSTED_PROXIES: `10.0.0.1,${bad}` }, REPO_ROOT)).toThrow(ConfigError);
      expect(() => loadConfig({ CASHCODE_TRUSTED_PROXIES: bad }, REPO_ROOT)).toThrow(
        `CASHCODE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. 10.0.0.1, 10.0.0.0/8, fd00::/8, loopback), got "${bad}"`,
      );
    }
  });
});

describe('Origins of the Angular dev server', () => {
  const DEV_ORIGINS = ['http://localhost:4200', 'http://127.0.0.1:4200'];

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ module: probe });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('Scenario: the Angular dev server origin is refused by default', async () => {
      expect(t.config.allowedOrigins.some((origin) => origin.endsWith(':4200'))).toBe(false);
      for (const origin of DEV_ORIGINS) {
        const res = await request(t.httpUrl).post('/api/probe/items').set('Origin', origin).send({ name: 'a', count: 1 }).expect(403);
        expect(res.body).toMatchObject({ status: 403, detail: 'Origin is not allowed' });
        const preflight = await request(t.httpUrl)
          .options('/api/probe/items')
          .set('Origin', origin)
          .set('Access-Control-Request-Method', 'POST');
        expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
        expect(await rawUpgrade(t.httpUrl, '/ws', { Origin: origin })).toMatchObject({ opened: false, status: 403 });
      }
    });
  });

  describe('with CASHCODE_CONSOLE_DEV', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ module: probe, env: { CASHCODE_CONSOLE_DEV: '1' } });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('Scenario: with CASHCODE_CONSOLE_DEV the dev server origin is accepted', async () => {
      for (const origin of DEV_ORIGINS) {
        await request(t.httpUrl).post('/api/probe/items').set('Origin', origin).send({ name: 'a', count: 1 }).expect(201);
        const preflight = await request(t.httpUrl)
          .options('/api/probe/items')
          .set('Origin', origin)
          .set('Access-Control-Request-Method', 'POST')
          .expect(200);
        expect(preflight.headers['access-control-allow-origin']).toBe(origin);
        expect(await rawUpgrade(t.httpUrl, '/ws', { Origin: origin })).toEqual({ opened: true });
      }
      // other ports of localhost are still foreign origins
      await request(t.httpUrl).post('/api/probe/items').set('Origin', 'http://localhost:4201').send({ name: 'a', count: 1 }).expect(403);
      expect(() => loadConfig({ CASHCODE_CONSOLE_DEV: 'maybe' }, REPO_ROOT)).toThrow('CASHCODE_CONSOLE_DEV must be true or false');
    });
  });
});

describe('Start-up log', () => {
  let t: TestApp;
  let debugApp: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { CASHCODE_FILE_LOG_LEVEL: 'INFO' } });
    debugApp = await startTestApp({ module: probe, env: { CASHCODE_FILE_LOG_LEVEL: 'DEBUG', CASHCODE_API_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
    await debugApp?.close();
  });

  async function logLines(app: TestApp, wanted: RegExp): Promise<string[]> {
    const file = join(app.config.logDir, 'cashcode.log');
    // The file transport writes asynchronously: read until the wanted line is there (bounded).
    for (let i = 0; i < 100; i++) {
      const text = existsSync(file) ? await fs.readFile(file, 'utf8') : '';
      if (wanted.test(text)) return text.split('\n').filter((line) => line !== '');
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no line matching ${wanted} in ${file}`);
  }

  it('Scenario: the first lines say where the console, the API docs and the gateway are', async () => {
    const lines = await logLines(t, /CashCode is running/);
    const banner = lines.findIndex((line) => line.includes('CashCode is running'));
    expect(lines[banner]).toContain(
      `INFO     Bootstrap request_id=- chat_id=- turn_id=- CashCode is running: console ${t.httpUrl}/ (not built yet: run npm run build) · API docs ${t.httpUrl}/api/docs · WebSocket ${t.wsUrl} · auth: off (CASHCODE_AUTH=off)`,
    );
    // only the modules' one-line summaries come before it; no route table
    expect(banner).toBeLessThan(10);
    expect(lines.join('\n')).not.toMatch(/RoutesResolver|RouterExplorer|InstanceLoader|Mapped \{/);
    const debugLines = await logLines(debugApp, /CashCode is running/);
    expect(debugLines.find((line) => line.includes('CashCode is running'))).toContain(`auth: on · sign in: ${debugApp.signInUrl}`);
    expect(debugApp.signInUrl).toMatch(new RegExp(`^${debugApp.httpUrl}/api/auth/login\\?code=[A-Za-z0-9_-]{43}$`));
  });

  it('Scenario: route mapping is logged at DEBUG', async () => {
    const lines = await logLines(debugApp, /Mapped \{\/api\/health, GET\} route/);
    const mapped = lines.filter((line) => /Mapped \{/.test(line));
    expect(mapped.length).toBeGreaterThan(0);
    for (const line of mapped) expect(line).toMatch(/ DEBUG {4}(?:RouterExplorer|RoutesResolver) /);
    expect(lines.filter((line) => / INFO {5}(?:RoutesResolver|RouterExplorer|InstanceLoader|NestFactory) /.test(line))).toEqual([]);
  });
});
