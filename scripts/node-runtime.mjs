// What `npm start`, `npm run backup` and `npm run restore` share (scripts/start.mjs, scripts/data.mjs):
// - a supported Node.js: on an older `node` (Debian 12 and Ubuntu 24.04 ship 18, many machines have 20) the script
//   runs itself again under the newest Node.js 22 from the npm registry, fetched once into ~/.cache/cashcode-node by
//   scripts/with-node.sh (the official binary, the `node-<os>-<arch>` package; no network beyond the npm registry);
// - the build: `npm run build` when one of its outputs is missing.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** the oldest Node.js the project supports ("engines" in package.json: 22.13, the first 22.x with node:sqlite unflagged) */
export const NODE_FLOOR = { major: 22, minor: 13 };
/** set in the environment of the run under the fetched Node.js (a second fetch would loop) */
export const REEXEC_ENV = 'CASHCODE_NODE_REEXEC';

/** Whether a Node.js version (`process.versions.node`) is at least the floor. */
export function isSupportedNode(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > NODE_FLOOR.major || (major === NODE_FLOOR.major && minor >= NODE_FLOOR.minor);
}

/**
 * What to do with this Node.js: `run` (supported), `fetch` (older; run again under a fetched one) or `fail` (older,
 * and either already the fetched run or a platform scripts/with-node.sh does not cover), with the line to print.
 */
export function nodeDecision(version, env = process.env, platform = process.platform) {
  if (isSupportedNode(version)) return { action: 'run' };
  const floor = `${NODE_FLOOR.major}.${NODE_FLOOR.minor}`;
  if (env[REEXEC_ENV]) {
    return { action: 'fail', message: `cashcode: the fetched Node.js ${version} is older than ${floor}; remove ~/.cache/cashcode-node and try again` };
  }
  if (platform !== 'linux' && platform !== 'darwin') {
    return { action: 'fail', message: `cashcode: CashCode needs Node.js ${floor} or newer; you have ${version} — see README ("Run it")` };
  }
  return {
    action: 'fetch',
    message: `cashcode: Node.js ${version} is older than ${floor}; running under Node.js ${NODE_FLOOR.major} from the npm registry (fetched once into ~/.cache/cashcode-node)`,
  };
}

/**
 * Returns when this Node.js is supported. Otherwise runs `script` with `args` again under a fetched Node.js 22
 * (scripts/with-node.sh), forwarding signals and exiting with its code; or exits 1 with one line.
 */
export function ensureSupportedNode(script, args) {
  const decision = nodeDecision(process.versions.node);
  if (decision.action === 'run') return;
  process.stderr.write(`${decision.message}\n`);
  if (decision.action === 'fail') process.exit(1);
  const child = spawn('bash', [join(root, 'scripts', 'with-node.sh'), String(NODE_FLOOR.major), 'node', script, ...args], {
    cwd: process.cwd(),
    stdio: 'inherit',
    env: { ...process.env, [REEXEC_ENV]: '1' },
  });
  forwardSignalsAndExit(child);
  // nothing else runs in this process: the caller's code waits forever (the exit comes from the child)
  return new Promise(() => {});
}

/** Forwards SIGINT/SIGTERM/SIGHUP to `child` and exits the way it does. */
export function forwardSignalsAndExit(child) {
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => forward(signal));
  child.on('error', (error) => {
    process.stderr.write(`cashcode: could not start: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // exit the way the child did (128 + signal number in shells)
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

/** The build outputs `npm start` needs; the command line of backups needs only the first two. */
export const BUILD_OUTPUTS = [
  join(root, 'libs', 'contracts', 'dist', 'cjs', 'index.js'),
  join(root, 'apps', 'api', 'dist', 'main.js'),
  join(root, 'apps', 'console', 'dist', 'console', 'browser', 'index.html'),
];

/** Runs `npm run build` when one of `outputs` is missing; exits on a failed build. */
export function buildIfMissing(outputs = BUILD_OUTPUTS) {
  const missing = outputs.filter((file) => !existsSync(file));
  if (missing.length === 0) return;
  process.stdout.write(`cashcode: building (missing ${missing.map((f) => f.slice(root.length + 1)).join(', ')})\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', 'build'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NG_CLI_ANALYTICS: 'false' },
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) {
    process.stderr.write('cashcode: the build failed; see the output above\n');
    process.exit(build.status ?? 1);
  }
}
