// The README's first command on a stock machine (openspec backup "Requirement: Two commands on a stock machine"): a
// fresh clone of this repository's HEAD with Node.js 20 first on PATH runs `npm install && npm start` and reaches a
// healthy server. Node.js 20 comes from the npm registry like every Node this project fetches (scripts/with-node.sh);
// `npm install` and the Node.js 22 that `npm start` fetches use the npm registry and the machine's npm cache.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

test('Scenario: a fresh clone on Node.js 20 installs with npm install and serves with npm start', { timeout: 900_000 }, async () => {
  // what the test runner's Node.js was given (npm test sets flags newer Node.js lines take) is not Node.js 20's
  const base = { ...process.env };
  delete base.NODE_OPTIONS;
  delete base.CASHCODE_NODE_REEXEC;
  const node20 = execFileSync(join(root, 'scripts', 'with-node.sh'), ['20', 'node', '-p', 'process.execPath'], { env: base, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'cashcode-stock-'));
  const clone = join(dir, 'cashcode');
  let child = null;
  try {
    execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${root}`, clone], { stdio: 'inherit' });
    const env = {
      ...base,
      PATH: `${dirname(node20)}${delimiter}${process.env.PATH}`,
      NG_CLI_ANALYTICS: 'false',
    };
    assert.match(execFileSync('node', ['--version'], { env, encoding: 'utf8' }), /^v20\./);
    execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: clone, env, stdio: 'inherit' });

    const port = await freePort();
    child = spawn('npm', ['start'], {
      cwd: clone,
      env: {
        ...env,
        CASHCODE_PORT: String(port),
        WS_PORT: String(port),
        CASHCODE_DATA_DIR: join(dir, 'data'),
        CASHCODE_CONFIG_DIR: join(dir, 'config'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
    child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
    const deadline = Date.now() + 600_000;
    let healthy = false;
    while (!healthy && Date.now() < deadline && child.exitCode === null) {
      try {
        healthy = (await fetch(`http://127.0.0.1:${port}/api/health`)).ok;
      } catch {
        // not listening yet (building)
      }
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(healthy, true, `no healthy server:\n${output}`);
    assert.match(output, /Node\.js 20\.\d+\.\d+ is older than 22\.13; running under Node\.js 22/);
    assert.match(output, /sign the console in/);
  } finally {
    if (child?.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
