#!/usr/bin/env node
// `npm start`: builds what is missing (contracts, API, console — `npm run build`), then runs the built server
// (`node apps/api/dist/main.js`, the same as `npm run serve`), forwarding signals and its exit code.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// the oldest Node.js line the project supports ("engines" in package.json); older ones stop here with a clear message
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `CashCode needs Node.js 22.13 or newer; you have ${process.versions.node} — see README ("Requires Node.js")\n`,
  );
  process.exit(1);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outputs = [
  join(root, 'libs', 'contracts', 'dist', 'cjs', 'index.js'),
  join(root, 'apps', 'api', 'dist', 'main.js'),
  join(root, 'apps', 'console', 'dist', 'console', 'browser', 'index.html'),
];

const missing = outputs.filter((file) => !existsSync(file));
if (missing.length > 0) {
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

// glibc malloc settings (unless set; glibc reads them at process start, so they are set for the server process here):
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates its own malloc arena (V8's GC helpers and libuv's pool
//   threads do), and freed memory in them stays resident; two arenas kept 8 MB less resident after the bench's
//   100 chats × 5 turns (132 vs 141 MB) at no measured CPU cost;
// - MALLOC_MMAP_THRESHOLD_=32768: blocks of 32 KiB and more (a socket read's 64 KiB buffer, a request body) get their
//   own mapping, returned to the system when freed. By default glibc raises that threshold as such blocks are freed and
//   then serves them from its main heap, which a burst of turns left fragmented and resident: 6–12 MB more once idle
//   after the load (RSS 122–130 vs 116–118 MB, idle 108 vs 106 MB), for 0.2–0.5 ms of server CPU per turn under load
//   (~10 %: medians 4.5 vs 5.0 ms in one series of interleaved passes of `npm run bench -- server`'s load).
const child = spawn(process.execPath, [join(root, 'apps', 'api', 'dist', 'main.js')], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '32768',
  },
});
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => forward(signal));
child.on('error', (error) => {
  process.stderr.write(`cashcode: could not start the server: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Exit the way the child did (128 + signal number in shells).
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
