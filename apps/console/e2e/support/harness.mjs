// Browser e2e harness: the BUILT API (serving the built console) on free ports with temporary data/config
// directories, Debian Chromium through playwright-core, and screenshots under e2e/artifacts/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
    ...extraEnv,
  };
  delete env.CASHCODE_API_TOKEN;
  const child = spawn(process.execPath, [apiMain], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
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
  return {
    url,
    dir,
    httpPort,
    wsPort,
    output: () => output,
    /** stops the process (keeps the directories when `keepData`) */
    async stop({ keepData = false } = {}) {
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
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
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
