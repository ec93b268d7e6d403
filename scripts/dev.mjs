#!/usr/bin/env node
// `npm run dev`: the console from the Angular dev server (`ng serve`, http://localhost:4200, live reload) next to the
// API server. The API is built first when it is missing (contracts + API, not the console) and runs with
// CASHCODE_CONSOLE_DEV=1, the one setting under which it trusts the dev server's origins (http://localhost:4200 and
// http://127.0.0.1:4200) for REST and the WebSocket gateway. The dev server forwards /api to the API
// (apps/console/proxy.conf.mjs), the console's sign-in link included: the API prints that link for the dev server
// (http://localhost:4200/api/auth/login?code=…), and this script prints it again once the dev server answers, below
// the dev server's own start-up output. Stops both when either exits or on Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const shell = process.platform === 'win32';
const env = { ...process.env, NG_CLI_ANALYTICS: 'false', CASHCODE_CONSOLE_DEV: '1' };

const apiOutputs = [join(root, 'libs', 'contracts', 'dist', 'cjs', 'index.js'), join(root, 'apps', 'api', 'dist', 'main.js')];
if (apiOutputs.some((file) => !existsSync(file))) {
  process.stdout.write('cashcode: building the API (missing build output)\n');
  for (const workspace of ['@cashcode/contracts', '@cashcode/skill-format', '@cashcode/api']) {
    const build = spawnSync(npm, ['run', 'build', '-w', workspace], { cwd: root, stdio: 'inherit', env, shell });
    if (build.status !== 0) {
      process.stderr.write(`cashcode: building ${workspace} failed; see the output above\n`);
      process.exit(build.status ?? 1);
    }
  }
}

const api = spawn(process.execPath, [join(root, 'apps', 'api', 'dist', 'main.js')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env });
const children = [api, spawn(npm, ['run', 'ng', '-w', '@cashcode/console', '--', 'serve'], { cwd: root, stdio: 'inherit', env, shell })];

// the API's output passes through; its sign-in link is repeated once the dev server is up
let signInLink = null;
let apiOutput = '';
api.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (signInLink !== null) return;
  apiOutput = (apiOutput + chunk.toString()).slice(-4096);
  signInLink = /cashcode: open (\S+) to sign the console in/.exec(apiOutput)?.[1] ?? null;
  if (signInLink !== null) void repeatWhenConsoleIsUp(signInLink);
});

async function repeatWhenConsoleIsUp(link) {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      if ((await fetch(new URL('/', link), { signal: AbortSignal.timeout(1_000) })).ok) {
        process.stdout.write(`\ncashcode: the console is ready: open ${link} to sign it in\n\n`);
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
let exitCode = null;
const stopAll = (signal) => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stopAll(signal));
for (const child of children) {
  child.on('error', (error) => {
    process.stderr.write(`cashcode: could not start a dev process: ${error.message}\n`);
    exitCode ??= 1;
    stopAll('SIGTERM');
  });
  child.on('exit', (code) => {
    exitCode ??= code ?? 1;
    stopAll('SIGTERM');
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(exitCode);
  });
}
