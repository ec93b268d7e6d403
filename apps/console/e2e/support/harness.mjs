// Browser e2e harness: the BUILT API (serving the built console) on free ports with temporary data/config
// directories, Debian Chromium through playwright-core, and screenshots under e2e/artifacts/.
//
// Authentication: the server runs with its real default (a generated API token, a sign-in link printed at each start).
// Every browser context of launchBrowser() is signed in before the test uses it, through that printed one-time link
// (the first context of a start opens it; later ones get the same session cookie); the tests' own Node-side fetches
// to a running server carry its API token, as any local client of the owner would. A scenario about the sign-in itself
// uses launchBrowser({ signIn: false }).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..', '..', '..');
export const artifactsDir = resolve(here, '..', 'artifacts');
const apiMain = join(repoRoot, 'apps', 'api', 'dist', 'main.js');
const consoleIndex = join(repoRoot, 'apps', 'console', 'dist', 'console', 'browser', 'index.html');
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function assertBuilt() {
  const missing = [apiMain, consoleIndex, chromiumPath].filter((path) => !existsSync(path));
  if (missing.length) throw new Error(`browser e2e needs a build and Chromium; missing: ${missing.join(', ')} (run npm run build; apt-get install -y chromium)`);
}

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** The servers started by startApi and not stopped yet (their URL, token and sign-in link). */
const running = new Set();

/** The stdout line with this start's sign-in link (apps/api/src/server.ts). */
const SIGN_IN_LINE = /cashcode: open (\S+) to sign the console in/;

const plainFetch = globalThis.fetch;
/** Node-side fetches of a test to one of its running servers carry the server's API token (unless they set one). */
globalThis.fetch = (input, init = {}) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const api = [...running].find((candidate) => url === candidate.url || url.startsWith(`${candidate.url}/`));
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!api || headers.has('authorization')) return plainFetch(input, init);
  headers.set('authorization', `Bearer ${api.token}`);
  return plainFetch(input, { ...init, headers });
};

async function waitForHealth(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let exited = null;
  child.once('exit', (code) => (exited = code));
  while (Date.now() < deadline) {
    if (exited !== null) throw new Error(`API exited with code ${exited} before becoming healthy`);
    try {
      const response = await fetch(`${url}/api/health`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`API did not become healthy within ${timeoutMs} ms`);
}

/**
 * Starts `node apps/api/dist/main.js`. Pass `reuse` (a previous server) to restart on the same ports and directories,
 * and `extraEnv` for settings a scenario needs (e.g. `{ CASHCODE_MODEL_TITLES: 'true' }`).
 */
export async function startApi(reuse, extraEnv = {}) {
  const dir = reuse?.dir ?? mkdtempSync(join(tmpdir(), 'cashcode-e2e-'));
  const httpPort = reuse?.httpPort ?? (await freePort());
  const wsPort = reuse?.wsPort ?? (await freePort());
  const env = {
    ...process.env,
    CASHCODE_DATA_DIR: join(dir, 'data'),
    CASHCODE_CONFIG_DIR: join(dir, 'config'),
    MEMORY_DIR: join(dir, 'data', 'memory'),
    WORKSPACE_DIR: join(dir, 'data', 'workspace'),
    CASHCODE_LOG_DIR: join(dir, 'data', 'logs'),
    CASHCODE_HOST: '127.0.0.1',
    CASHCODE_PORT: String(httpPort),
    WS_PORT: String(wsPort),
    CASHCODE_CONSOLE_LOG_LEVEL: 'WARNING',
    // model-written titles add a model call after a chat's first turn (scenarios that count model calls stay exact)
    CASHCODE_MODEL_TITLES: 'false',
  };
  // the server's real default (a generated token), unless a scenario asks for something else
  delete env.CASHCODE_API_TOKEN;
  delete env.CASHCODE_AUTH;
  Object.assign(env, extraEnv);
  const child = spawn(process.execPath, [apiMain], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let signInUrl = null;
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
    signInUrl ??= SIGN_IN_LINE.exec(output)?.[1] ?? null;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const url = `http://127.0.0.1:${httpPort}`;
  try {
    await waitForHealth(url, child, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${error.message}\n--- API output ---\n${output}`);
  }
  const authOff = env.CASHCODE_AUTH?.trim().toLowerCase() === 'off';
  const tokenFile = join(dir, 'config', 'settings', 'api-token');
  const deadline = Date.now() + 10_000;
  while (!authOff && signInUrl === null && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  if (!authOff && signInUrl === null) {
    child.kill('SIGKILL');
    throw new Error(`the API printed no sign-in link\n--- API output ---\n${output}`);
  }
  const api = {
    url,
    dir,
    httpPort,
    wsPort,
    /** the API token (CASHCODE_API_TOKEN or the generated one); null with CASHCODE_AUTH=off */
    token: authOff ? null : (env.CASHCODE_API_TOKEN ?? readFileSync(tokenFile, 'utf8').trim()),
    /** this start's one-time sign-in link, as the server printed it */
    signInUrl,
    /** the session cookie once a context signed in (copied into later contexts) */
    sessionCookies: null,
    output: () => output,
    /** stops the process (keeps the directories when `keepData`) */
    async stop({ keepData = false } = {}) {
      running.delete(api);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      if (!keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (!authOff) running.add(api);
  return api;
}

/**
 * Signs a browser context in to every running server: the first context of a start opens the printed one-time link
 * in the context (the server's 303 sets the session cookie in the context's cookie jar; the console is not loaded, so
 * a test's first navigation is still its own); later contexts get the same cookie.
 */
export async function signInContext(context) {
  for (const api of running) {
    if (api.sessionCookies === null && api.signInUrl !== null) {
      const response = await context.request.get(api.signInUrl, { maxRedirects: 0 });
      if (response.status() !== 303) throw new Error(`the sign-in link answered ${response.status()}: ${await response.text()}`);
      api.signInUrl = null;
      const cookies = (await context.cookies(api.url)).filter((cookie) => cookie.name === `cashcode_session_${api.httpPort}`);
      if (cookies.length !== 1 || !cookies[0].httpOnly || cookies[0].sameSite !== 'Strict') {
        throw new Error(`the sign-in link set no HttpOnly SameSite=Strict session cookie: ${JSON.stringify(cookies)}`);
      }
      // a restart of the same server (same token) keeps the cookie: later starts reuse it
      for (const other of running) if (other.dir === api.dir) other.sessionCookies = cookies;
    } else if (api.sessionCookies !== null) {
      await context.addCookies(api.sessionCookies);
    }
  }
  return context;
}

/**
 * Launches Chromium. Every context it creates (browser.newContext, browser.newPage) is signed in to the running
 * servers first (signInContext), unless `signIn` is false.
 */
export async function launchBrowser({ signIn = true } = {}) {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  if (!signIn) return browser;
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => signInContext(await newContext(options));
  browser.newPage = async (options) => {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    // like Playwright's own browser.newPage: closing the page closes its context
    page.once('close', () => void context.close().catch(() => undefined));
    return page;
  };
  return browser;
}

export async function screenshot(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/**
 * Retries an async check (one that throws until it holds) every `intervalMs` until it passes, then returns its value;
 * after `timeoutMs` the last failure is thrown. For a state read outside the page (the API, the clipboard): Playwright's
 * `waitForFunction` does not await a predicate's promise, so an async predicate passes at once.
 */
export async function eventually(check, { timeoutMs = 20_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

/** The title bar's connection indicator while the chat socket is connected (its `data-state`; the text is localised). */
export function connected(page) {
  return page.locator('[data-testid="connection-state"][data-state="connected"]');
}

/**
 * Types `text` in the composer and presses Enter once the chat socket is connected and Send is enabled. A page that
 * just loaded connects in the background; Enter before that is refused ("not connected") or, with no chat open yet,
 * ignored, as it is for a user (who sees the state in the title bar and a disabled Send).
 */
export async function typeAndSend(page, text) {
  await connected(page).waitFor({ state: 'attached' });
  const input = page.getByTestId('composer-input');
  await input.fill(text);
  await page.locator('[data-testid="send-button"]:not([disabled])').waitFor();
  await input.press('Enter');
}
