#!/usr/bin/env node
// `npm start`: on a Node.js older than the floor, runs again under a supported one fetched from the npm registry
// (scripts/node-runtime.mjs); builds what is missing (contracts, API, console — `npm run build`), then runs the built
// server (`node apps/api/dist/main.js`, the same as `npm run serve`), forwarding signals and its exit code.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfMissing, ensureSupportedNode, forwardSignalsAndExit, root } from './node-runtime.mjs';

await ensureSupportedNode(fileURLToPath(import.meta.url), process.argv.slice(2));
buildIfMissing();

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
forwardSignalsAndExit(child);
