// `npm start` on a stock machine (openspec backup "Requirement: Two commands on a stock machine"): the decision of
// scripts/node-runtime.mjs, and scripts/start.mjs run for real in a copy of the scripts with stub build outputs —
// under a supported Node.js (nothing changes) and, when the machine has one, under a Node.js older than the floor,
// with a fake `npm` standing in for the registry (`npm view` / `npm install` of node-<os>-<arch>).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isSupportedNode, nodeDecision, REEXEC_ENV } from './node-runtime.mjs';

const scripts = dirname(fileURLToPath(import.meta.url));

test('the floor is 22.13', () => {
  for (const version of ['22.13.0', '22.23.5', '24.0.0', '26.1.0']) assert.equal(isSupportedNode(version), true, version);
  for (const version of ['18.19.1', '20.20.2', '22.12.0', '21.7.3']) assert.equal(isSupportedNode(version), false, version);
});

test('an older Node.js is run again under a fetched one, once', () => {
  assert.equal(nodeDecision('22.13.0', {}).action, 'run');
  const fetch = nodeDecision('20.20.2', {}, 'linux');
  assert.equal(fetch.action, 'fetch');
  assert.equal(
    fetch.message,
    'cashcode: Node.js 20.20.2 is older than 22.13; running under Node.js 22 from the npm registry (fetched once into ~/.cache/cashcode-node)',
  );
  assert.equal(nodeDecision('20.20.2', { [REEXEC_ENV]: '1' }, 'linux').action, 'fail');
  assert.match(nodeDecision('18.19.1', {}, 'win32').message, /needs Node\.js 22\.13 or newer; you have 18\.19\.1/);
});

/** A copy of the scripts with stub build outputs; the stub server prints the Node.js it runs under. */
function skeleton() {
  const root = mkdtempSync(join(tmpdir(), 'cashcode-start-'));
  mkdirSync(join(root, 'scripts'));
  for (const file of ['start.mjs', 'node-runtime.mjs', 'with-node.sh']) copyFileSync(join(scripts, file), join(root, 'scripts', file));
  const stub = (path, text) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  stub('libs/contracts/dist/cjs/index.js', '');
  stub('apps/console/dist/console/browser/index.html', '');
  stub('apps/api/dist/main.js', "process.stdout.write(`stub server under ${process.versions.node}\\n`);\n");
  return root;
}

/** A node older than the floor: the machine's stock one, else a Node.js 20 from the npm registry (scripts/with-node.sh). */
function oldNode() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version && !isSupportedNode(version)) return { path: candidate, version };
  }
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version && !isSupportedNode(version)) return { path: candidate, version };
  }
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // flags npm test gives newer Node.js lines
  const fetched = spawnSync(join(scripts, 'with-node.sh'), ['20', 'node', '-p', '[process.execPath, process.versions.node].join(" ")'], { env, encoding: 'utf8' });
  assert.equal(fetched.status, 0, fetched.stderr);
  const [path, version] = fetched.stdout.trim().split(' ');
  return { path, version };
}

test('Scenario: on a supported Node.js npm start changes nothing', () => {
  const root = skeleton();
  try {
    const run = spawnSync(process.execPath, [join(root, 'scripts', 'start.mjs')], { encoding: 'utf8', env: { ...process.env, [REEXEC_ENV]: '' } });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `stub server under ${process.versions.node}\n`);
    assert.doesNotMatch(run.stderr, /older than/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('Scenario: npm start on an older Node.js fetches a supported one once and runs under it', () => {
  assert.equal(isSupportedNode(process.versions.node), true, 'npm test runs under Node.js 22.13 or newer');
  const old = oldNode();
  const root = skeleton();
  const cache = join(root, 'node-cache');
  const fakeBin = join(root, 'fake-npm');
  const calls = join(root, 'npm-calls.log');
  mkdirSync(fakeBin);
  // the registry as scripts/with-node.sh asks it: `npm view node-<os>-<arch>@22 version --json`, then
  // `npm install --prefix <dir> … node-<os>-<arch>@<version>`; the "binary" it installs runs this test's Node.js
  writeFileSync(
    join(fakeBin, 'npm'),
    [
      '#!/bin/sh',
      `echo "$*" >> '${calls}'`,
      'case "$1" in',
      "  view) printf '[\\n  \"22.98.0\",\\n  \"22.99.0\"\\n]\\n' ;;",
      '  install)',
      '    prefix=""; pkg=""',
      '    while [ $# -gt 0 ]; do case "$1" in --prefix) prefix="$2"; shift ;; node-*) pkg="${1%@*}" ;; esac; shift; done',
      '    mkdir -p "$prefix/node_modules/$pkg/bin"',
      `    printf '#!/bin/sh\\nexec %s "$@"\\n' '${process.execPath}' > "$prefix/node_modules/$pkg/bin/node"`,
      '    chmod +x "$prefix/node_modules/$pkg/bin/node" ;;',
      '  *) exit 1 ;;',
      'esac',
      '',
    ].join('\n'),
  );
  chmodSync(join(fakeBin, 'npm'), 0o755);
  const env = {
    ...process.env,
    PATH: [fakeBin, dirname(old.path), ...(process.env.PATH ?? '').split(delimiter)].join(delimiter),
    CASHCODE_NODE_CACHE: cache,
    [REEXEC_ENV]: '',
    // flags npm test gives newer Node.js lines; the old one refuses them
    NODE_OPTIONS: '',
  };
  try {
    const first = spawnSync(old.path, [join(root, 'scripts', 'start.mjs')], { encoding: 'utf8', env });
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stdout, `stub server under ${process.versions.node}\n`);
    assert.match(first.stderr, new RegExp(`^cashcode: Node\\.js ${old.version.replace(/\./g, '\\.')} is older than 22\\.13; running under Node\\.js 22 from the npm registry`));
    assert.match(first.stderr, /with-node: installing Node\.js 22\.99\.0/);
    assert.ok(existsSync(join(cache, '22.99.0')));
    assert.equal(readFileSync(calls, 'utf8').trim().split('\n').length, 2);

    // the second start finds it in the cache: no registry call, no install line
    const second = spawnSync(old.path, [join(root, 'scripts', 'start.mjs')], { encoding: 'utf8', env });
    assert.equal(second.status, 0, second.stderr);
    assert.equal(second.stdout, `stub server under ${process.versions.node}\n`);
    assert.doesNotMatch(second.stderr, /installing/);
    assert.equal(readFileSync(calls, 'utf8').trim().split('\n').length, 2);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
