#!/usr/bin/env node
// Runs every test tier: build, type-check + lint, API unit + e2e (Jest), console unit (Vitest via ng test),
// browser e2e (node:test + playwright-core + Debian Chromium). Prints one closing line "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = join(root, 'apps', 'api', 'test', 'artifacts');
mkdirSync(resultsDir, { recursive: true });
/** NODE_OPTIONS with `flags` added to the caller's own */
const nodeOptions = (...flags) => [process.env.NODE_OPTIONS, ...flags].filter(Boolean).join(' ');
// --no-experimental-webstorage (accepted from Node 22 on; Node 25+ reads it as --no-webstorage): Node 25+ defines its
// own global localStorage (undefined without --localstorage-file), which keeps Vitest's jsdom from installing jsdom's.
const env = {
  ...process.env,
  NG_CLI_ANALYTICS: 'false',
  FORCE_COLOR: '0',
  NO_COLOR: '1',
  NODE_OPTIONS: nodeOptions('--no-experimental-webstorage'),
};
let passed = 0;
let failed = 0;
const failures = [];

function run(label, command, args, options = {}) {
  process.stdout.write(`\n=== ${label} ===\n`);
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: options.cwd ?? root, env, stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`=== ${label}: ${result.status === 0 ? 'ok' : `FAILED (exit ${result.status})`} in ${seconds}s ===\n`);
  return result.status === 0;
}

/** A check that is not a test runner (type-check, lint): it adds a failure when it fails. */
function step(label, command, args) {
  if (!run(label, command, args)) {
    failures.push(label);
    failed++;
  }
}

// 1. build everything the tests use (the browser e2e runs the built server and console)
if (!run('build', 'npm', ['run', 'build'])) {
  process.stdout.write('\nbuild failed: no tests were run\n0 passed, 1 failed\n');
  process.exit(1);
}

// 2. static checks
step('type-check', 'npm', ['run', 'typecheck']);
step('lint', 'npm', ['run', 'lint']);
// the repository explains itself: no references to documents outside it (fixture tests + this repository)
step('reference check', 'node', ['--test', 'scripts/check-references.test.mjs']);
step('npm start on a stock Node.js', 'node', ['--test', 'scripts/start.test.mjs']);
// the lint rule that counts type-only imports in import cycles, on fixture trees
step('type-cycle rule', 'node', ['--test', 'scripts/lint/no-type-cycle.test.mjs']);

// 3. API: unit + e2e (Jest); counts come from Jest's JSON report
const jestReport = join(resultsDir, 'jest-results.json');
rmSync(jestReport, { force: true });
const jestOk = run('api unit + e2e (jest)', 'npx', ['jest', '--ci', '--json', `--outputFile=${jestReport}`], {
  cwd: join(root, 'apps', 'api'),
});
if (existsSync(jestReport)) {
  const report = JSON.parse(readFileSync(jestReport, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
  if (!jestOk && report.numFailedTests === 0 && !report.numRuntimeErrorTestSuites) failed++;
} else if (!jestOk) {
  failed++;
}
if (!jestOk) failures.push('api unit + e2e (jest)');

/** Runs a test step whose runner prints its own counts; echoes its output and adds the counts it reports. */
function countedStep(label, args, parseCounts, extraEnv = {}) {
  process.stdout.write(`\n=== ${label} ===\n`);
  const started = Date.now();
  const result = spawnSync('npm', args, {
    cwd: root,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  process.stdout.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? '');
  const text = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.replace(/\u001b\[[0-9;]*m/g, '');
  const counts = parseCounts(text);
  const ok = result.status === 0;
  passed += counts.passed;
  failed += counts.failed + (!ok && counts.failed === 0 ? 1 : 0);
  if (!ok) failures.push(label);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`=== ${label}: ${ok ? 'ok' : `FAILED (exit ${result.status})`} in ${seconds}s ===\n`);
}

// 4. console unit tests (Vitest through the Angular builder): "Tests  2 failed | 107 passed (109)"
countedStep('console unit (vitest)', ['test', '-w', '@cashcode/console'], (text) => {
  const line = text.split('\n').find((l) => /^\s*Tests\s+.*\(\d+\)/.test(l)) ?? '';
  return {
    passed: Number(/(\d+) passed/.exec(line)?.[1] ?? 0),
    failed: Number(/(\d+) failed/.exec(line)?.[1] ?? 0),
  };
});

// 5. browser e2e against the built server + console (node:test). The TAP reporter prints "# pass N", "# fail N" on
// every Node line (from Node 23 on the default reporter is spec, even when piped: "ℹ pass N", also accepted here).
countedStep(
  'browser e2e (playwright-core + chromium)',
  ['run', 'test:e2e', '-w', '@cashcode/console'],
  (text) => ({
    passed: Number(/^(?:#|ℹ) pass (\d+)/m.exec(text)?.[1] ?? 0),
    failed: Number(/^(?:#|ℹ) fail (\d+)/m.exec(text)?.[1] ?? 0),
  }),
  { NODE_OPTIONS: nodeOptions('--no-experimental-webstorage', '--test-reporter=tap') },
);

// 6. the README's first command on a stock machine: a fresh clone with Node.js 20 first on PATH, `npm install &&
// npm start`, a healthy server (minutes: an install and a full build; the npm registry and npm's cache)
countedStep(
  'fresh clone on a stock Node.js (npm install && npm start)',
  ['exec', '--', 'node', '--test', '--test-reporter=tap', 'scripts/stock-node.e2e.mjs'],
  (text) => ({
    passed: Number(/^(?:#|ℹ) pass (\d+)/m.exec(text)?.[1] ?? 0),
    failed: Number(/^(?:#|ℹ) fail (\d+)/m.exec(text)?.[1] ?? 0),
  }),
);

process.stdout.write(`\n${failures.length ? `failed: ${failures.join(', ')}\n` : ''}`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failures.length || failed ? 1 : 0);
