/**
 * Authentication by default (openspec http-platform, "Requirement: A credential even on loopback"): with no
 * CASHCODE_API_TOKEN the server creates an owner-only token file and needs it (or the console's session cookie) on
 * REST, the gateway, `/metrics` and `/v1`; the one-time sign-in link; CASHCODE_AUTH=off; CASHCODE_API_TOKEN; and
 * another local account (`nobody`) trying to drive a spawned server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, promises as fs, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest, rawUpgrade, type RawResponse } from './support/raw-http';
import { ensureBuiltServer, killGroup, makeServerDirs, serverEnv, spawnServer, startedUrl, type WatchedProcess } from './support/server-process';
import { startTestApp, type TestApp } from './support/test-app';

jest.setTimeout(90_000);

/** The server's real default: no CASHCODE_AUTH and no CASHCODE_API_TOKEN (test-app otherwise turns auth off). */
const DEFAULT_AUTH = { CASHCODE_AUTH: 'on' };
const tokenFile = (configDir: string) => join(configDir, 'settings', 'api-token');
const bearer = (token: string | null) => ({ Authorization: `Bearer ${token ?? ''}` });
const pathOf = (url: string) => url.slice(new URL(url).origin.length);

/** `name=value` of the session cookie a sign-in response set. */
function cookieOf(res: RawResponse): { pair: string; attributes: string } {
  const header = res.headers['set-cookie']?.[0];
  if (header === undefined) throw new Error(`no Set-Cookie (status ${res.status}): ${res.body.slice(0, 200)}`);
  const [pair, ...attributes] = header.split(';').map((part) => part.trim());
  return { pair: pair!, attributes: attributes.join('; ') };
}

async function logText(t: TestApp, wanted: RegExp): Promise<string> {
  const file = join(t.config.logDir, 'cashcode.log');
  for (let i = 0; i < 100; i++) {
    const text = existsSync(file) ? await fs.readFile(file, 'utf8') : '';
    if (wanted.test(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no line matching ${wanted} in ${file}`);
}

describe('authentication by default', () => {
  let t: TestApp;
  let configDir: string;
  beforeAll(async () => {
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-auth-config-'));
    t = await startTestApp({ env: DEFAULT_AUTH, configDir });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(configDir, { recursive: true, force: true });
  });

  it('Scenario: the first start creates an owner-only token file and every call needs it', async () => {
    const file = tokenFile(configDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(configDir, 'settings')).mode & 0o777).toBe(0o700);
    const stored = (await fs.readFile(file, 'utf8')).trim();
    expect(stored).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(t.apiToken).toBe(stored);

    // REST
    const refused = await rawRequest(t.httpUrl, 'GET', '/api/sessions');
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', bearer(stored))).status).toBe(200);
    // the gateway's handshake
    expect(await rawUpgrade(t.httpUrl, '/ws')).toMatchObject({ opened: false, status: 401 });
    expect(await rawUpgrade(t.httpUrl, `/ws?token=${stored}`)).toEqual({ opened: true });
    // /metrics
    expect((await rawRequest(t.httpUrl, 'GET', '/metrics')).status).toBe(401);
    expect((await rawRequest(t.httpUrl, 'GET', '/metrics', bearer(stored))).status).toBe(200);
    // /v1, once turned on: no key is 401, the server token is accepted as before
    const on = await rawRequest(t.httpUrl, 'PUT', '/api/settings/openai-compat', { ...bearer(stored), 'Content-Type': 'application/json' }, '{"enabled":true}');
    expect(on.status).toBe(200);
    const v1 = await rawRequest(t.httpUrl, 'GET', '/v1/models');
    expect(v1.status).toBe(401);
    expect(JSON.parse(v1.body)).toMatchObject({ error: { code: 'missing_api_key' } });
    expect((await rawRequest(t.httpUrl, 'GET', '/v1/models', bearer(stored))).status).toBe(200);
    // open: health and the console's boot info, which says a credential is needed
    expect((await rawRequest(t.httpUrl, 'GET', '/api/health')).status).toBe(200);
    expect(JSON.parse((await rawRequest(t.httpUrl, 'GET', '/api/client-config')).body)).toMatchObject({ token_required: true });
    // the token never reaches the log
    expect(await logText(t, /event=server\.started/)).not.toContain(stored);
  });

  it('Scenario: the one-time sign-in link sets the session cookie once', async () => {
    expect(t.signInUrl).toMatch(new RegExp(`^${t.httpUrl}/api/auth/login\\?code=[A-Za-z0-9_-]{43}$`));
    const link = pathOf(t.signInUrl!);
    const signedIn = await rawRequest(t.httpUrl, 'GET', link, { Accept: 'text/html' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers['location']).toBe('/');
    const cookie = cookieOf(signedIn);
    expect(cookie.pair).toMatch(new RegExp(`^cashcode_session_${t.config.port}=[A-Za-z0-9_-]{43}$`));
    expect(cookie.attributes.split('; ').sort()).toEqual(['HttpOnly', 'Max-Age=34560000', 'Path=/', 'SameSite=Strict']);
    // the cookie is not the token
    expect(cookie.pair).not.toContain(t.apiToken);

    // the cookie works for REST and for the gateway (from the console's own origin)
    const origin = { Origin: t.httpUrl };
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', { Cookie: cookie.pair })).status).toBe(200);
    expect(JSON.parse((await rawRequest(t.httpUrl, 'GET', '/api/auth/session', { Cookie: `other=1; ${cookie.pair}` })).body)).toEqual({
      signed_in: true,
      via: 'cookie',
    });
    expect(await rawUpgrade(t.httpUrl, '/ws', { ...origin, Cookie: cookie.pair })).toEqual({ opened: true });
    expect(await rawUpgrade(t.httpUrl, '/ws', { ...origin, Cookie: `cashcode_session_${t.config.port}=forged` })).toMatchObject({
      opened: false,
      status: 401,
    });
    // a state-changing call with the cookie from another site (or another port of this host) is refused
    for (const foreign of ['http://evil.example', 'http://127.0.0.1:9', 'null']) {
      const res = await rawRequest(t.httpUrl, 'POST', '/api/auth/logout', { Cookie: cookie.pair, Origin: foreign });
      expect({ foreign, status: res.status }).toEqual({ foreign, status: 403 });
      expect(await rawUpgrade(t.httpUrl, '/ws', { Cookie: cookie.pair, Origin: foreign })).toMatchObject({ opened: false, status: 403 });
    }

    // a second use of the code fails with a page that says what to do
    const again = await rawRequest(t.httpUrl, 'GET', link, { Accept: 'text/html' });
    expect(again.status).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.headers['content-type']).toMatch(/^text\/html/);
    expect(again.body).toContain('This sign-in link was already used');
    expect(again.body).toContain('Restart the server and open the new link it prints');
    const wrong = await rawRequest(t.httpUrl, 'GET', '/api/auth/login?code=wrong');
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ status: 401, code: 'sign_in_failed' });
    expect(JSON.parse(wrong.body).detail).toContain('This sign-in link is not valid');

    // sign-out clears the cookie
    const out = await rawRequest(t.httpUrl, 'POST', '/api/auth/logout', { ...origin, Cookie: cookie.pair });
    expect(out.status).toBe(204);
    expect(cookieOf(out)).toEqual({ pair: `cashcode_session_${t.config.port}=`, attributes: 'Path=/; Max-Age=0; HttpOnly; SameSite=Strict' });
  });

  it('Scenario: wrong sign-in codes are throttled like wrong tokens', async () => {
    // the previous scenario counted two failures of 127.0.0.1 (the used and the wrong code)
    for (let i = 0; i < 18; i++) expect((await rawRequest(t.httpUrl, 'GET', `/api/auth/login?code=guess-${i}`)).status).toBe(401);
    const throttled = await rawRequest(t.httpUrl, 'GET', '/api/auth/login?code=guess-x', { Accept: 'text/html' });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(throttled.body).toContain('Too many failed sign-in attempts');
    // the token still works
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', bearer(t.apiToken))).status).toBe(200);
  });
});

describe('the session cookie across restarts', () => {
  let configDir: string;
  const running: TestApp[] = [];
  beforeAll(async () => {
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-auth-restart-'));
  });
  afterAll(async () => {
    for (const app of running) await app.close();
    await fs.rm(configDir, { recursive: true, force: true });
  });

  it('Scenario: the session cookie survives a restart and ends when the token changes', async () => {
    const start = async () => {
      const app = await startTestApp({ env: DEFAULT_AUTH, configDir });
      running.push(app);
      return app;
    };
    const first = await start();
    const cookie = cookieOf(await rawRequest(first.httpUrl, 'GET', pathOf(first.signInUrl!))).pair;
    const value = cookie.slice(cookie.indexOf('=') + 1);
    const oldLink = pathOf(first.signInUrl!);
    await first.close();

    const second = await start();
    expect(second.apiToken).toBe(first.apiToken);
    expect(second.signInUrl).not.toBe(first.signInUrl);
    const name = `cashcode_session_${second.config.port}`;
    expect((await rawRequest(second.httpUrl, 'GET', '/api/sessions', { Cookie: `${name}=${value}` })).status).toBe(200);
    // the previous start's link does not work any more
    expect((await rawRequest(second.httpUrl, 'GET', oldLink)).status).toBe(401);
    await second.close();

    await fs.writeFile(tokenFile(configDir), 'a-new-token-written-by-the-owner-0123\n', { mode: 0o600 });
    const third = await start();
    expect(third.apiToken).toBe('a-new-token-written-by-the-owner-0123');
    const stale = `cashcode_session_${third.config.port}=${value}`;
    expect((await rawRequest(third.httpUrl, 'GET', '/api/sessions', { Cookie: stale })).status).toBe(401);
    expect(await rawUpgrade(third.httpUrl, '/ws', { Cookie: stale })).toMatchObject({ opened: false, status: 401 });
  });
});

describe('the gateway on its own port', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: DEFAULT_AUTH, configOverrides: { wsSharesHttp: false } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: the session cookie opens the gateway on its own port', async () => {
    const cookie = cookieOf(await rawRequest(t.httpUrl, 'GET', pathOf(t.signInUrl!))).pair;
    const wsBase = `http://127.0.0.1:${t.config.wsPort}`;
    // the browser sends the HTTP port's cookie to the gateway's port (cookies are scoped by host, not port)
    expect(await rawUpgrade(wsBase, '/', { Origin: t.httpUrl, Cookie: cookie })).toEqual({ opened: true });
    expect(await rawUpgrade(wsBase, '/', { Origin: t.httpUrl })).toMatchObject({ opened: false, status: 401 });
    expect(await rawUpgrade(wsBase, '/', { Origin: 'http://127.0.0.1:9', Cookie: cookie })).toMatchObject({ opened: false, status: 403 });
  });
});

describe('CASHCODE_AUTH=off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { CASHCODE_AUTH: 'off', CASHCODE_CONSOLE_LOG_LEVEL: 'error' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Scenario: CASHCODE_AUTH=off starts with a warning and needs no credential', async () => {
    const log = await logText(t, /event=auth\.disabled/);
    expect(log).toMatch(/WARNING +Bootstrap .*event=auth\.disabled — CASHCODE_AUTH=off: every account on this machine can use the API/);
    expect(t.apiToken).toBeNull();
    expect(t.signInUrl).toBeNull();
    expect(existsSync(tokenFile(t.configDir))).toBe(false);
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions')).status).toBe(200);
    expect(await rawUpgrade(t.httpUrl, '/ws')).toEqual({ opened: true });
    expect(JSON.parse((await rawRequest(t.httpUrl, 'GET', '/api/client-config')).body)).toMatchObject({ token_required: false });
  });
});

describe('CASHCODE_API_TOKEN', () => {
  const TOKEN = 'fixed-token-from-the-environment-0123';
  let t: TestApp;
  let configDir: string;
  beforeAll(async () => {
    configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-auth-env-'));
    await fs.mkdir(join(configDir, 'settings'), { mode: 0o700 });
    await fs.writeFile(tokenFile(configDir), 'the-token-file-holds-another-token-01\n', { mode: 0o600 });
    t = await startTestApp({ env: { CASHCODE_API_TOKEN: TOKEN }, configDir });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(configDir, { recursive: true, force: true });
  });

  it('Scenario: CASHCODE_API_TOKEN wins over the token file', async () => {
    expect(t.apiToken).toBe(TOKEN);
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', bearer(TOKEN))).status).toBe(200);
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', bearer('the-token-file-holds-another-token-01'))).status).toBe(401);
    // the sign-in link works with a fixed token too
    const cookie = cookieOf(await rawRequest(t.httpUrl, 'GET', pathOf(t.signInUrl!))).pair;
    expect((await rawRequest(t.httpUrl, 'GET', '/api/sessions', { Cookie: cookie })).status).toBe(200);
  });
});

/** Runs `command` as `nobody`; null when this process cannot switch users (not root, or no setpriv). */
function asNobody(command: string[]): { status: number | null; stdout: string; stderr: string } | null {
  const result = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', ...command], { encoding: 'utf8' });
  if (result.error) return null;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const canSwitchUsers = process.getuid?.() === 0 && asNobody(['true'])?.status === 0 && spawnSync('curl', ['--version']).status === 0;
const inCi = ['1', 'true', 'yes'].includes((process.env['CI'] ?? '').toLowerCase());

const describeAsRoot = canSwitchUsers ? describe : inCi ? describe : describe.skip;
if (!canSwitchUsers && !inCi) {
  // eslint-disable-next-line no-console
  console.warn('skipping "another local account": it needs root, setpriv and curl to act as the user nobody');
}

describeAsRoot('another local account', () => {
  const running: WatchedProcess[] = [];
  let root: string;
  beforeAll(async () => {
    if (!canSwitchUsers) throw new Error('this test needs root, setpriv and curl (CI runs as root with util-linux and curl)');
    ensureBuiltServer();
    const dirs = await makeServerDirs('cashcode-nobody-');
    root = dirs.root;
    // traversable by others, so that what keeps `nobody` out is the server's own modes, not the test's temp directory
    await fs.chmod(root, 0o755);
  }, 180_000);
  afterAll(async () => {
    for (const server of running.splice(0)) await killGroup(server);
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  /** `nobody` adds a stdio MCP server that would create `marker`, then connects it; returns the two HTTP statuses. */
  function nobodyDrives(httpUrl: string, name: string, marker: string): string[] {
    const body = JSON.stringify({ name, type: 'stdio', command: 'sh', args: ['-c', `touch ${marker}`] });
    const statuses: string[] = [];
    for (const [path, data] of [
      ['/api/mcp/servers', body],
      [`/api/mcp/servers/${name}/connect`, '{}'],
    ] as const) {
      const curl = asNobody(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-H', 'Content-Type: application/json', '-d', data, `${httpUrl}${path}`]);
      statuses.push(curl?.stdout ?? 'no curl');
    }
    return statuses;
  }

  it('Scenario: another local account cannot drive the server', async () => {
    const dirs = { dataDir: join(root, 'data'), configDir: join(root, 'config') };
    const env = serverEnv(dirs);
    // the server's real default: neither CASHCODE_AUTH nor CASHCODE_API_TOKEN
    delete env['CASHCODE_AUTH'];
    const server = spawnServer(env);
    running.push(server);
    const httpUrl = await startedUrl(server);
    await server.waitFor(/cashcode: open (\S+) to sign the console in/);

    const marker = join(root, 'ran-as-the-owner');
    expect(nobodyDrives(httpUrl, 'pwn', marker)).toEqual(['401', '401']);
    expect(asNobody(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `${httpUrl}/api/sessions`])?.stdout).toBe('401');
    expect(asNobody(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `${httpUrl}/metrics`])?.stdout).toBe('401');
    // nobody cannot read the token (nor list the config directory)
    const read = asNobody(['cat', tokenFile(dirs.configDir)]);
    expect(read?.status).not.toBe(0);
    expect(read?.stderr).toContain('Permission denied');
    expect(read?.stdout).toBe('');
    expect(existsSync(marker)).toBe(false);

    // the control: the same client against a server with CASHCODE_AUTH=off gets through and runs the command
    const openDirs = { dataDir: join(root, 'data-off'), configDir: join(root, 'config-off') };
    const open = spawnServer(serverEnv(openDirs, { CASHCODE_AUTH: 'off' }));
    running.push(open);
    const openUrl = await startedUrl(open);
    const offMarker = join(root, 'ran-with-auth-off');
    const statuses = nobodyDrives(openUrl, 'pwn', offMarker);
    expect(statuses[0]).toBe('201');
    for (let i = 0; i < 100 && !existsSync(offMarker); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(offMarker)).toBe(true);
  });
});
