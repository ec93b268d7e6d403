/**
 * Entry point: `node apps/api/dist/main.js` (`npm run serve`, `npm start`).
 *
 * 1. Sizes V8's heap for a small, long-running server (see HEAP_FLAGS).
 * 2. Runs the server (server.ts). `npm run build` also writes `dist/server.bundle.js`, the server and its dependencies
 *    in one file (scripts/bundle.mjs): no module resolution and one compilation, which halves the start-up time. It
 *    is used when it is at least as new as this file — a later plain `tsc` build makes it stale, and the compiled
 *    modules run instead. The bundle's compiled code is kept in `dist/server.bundle.cache` (a V8 code cache: the build
 *    warms it, and a start without a usable one — another Node version — writes it), so starts skip most of the
 *    compilation as well.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';

/**
 * V8 heap policy (set before anything runs, the same on every start, which the code cache
 * requires). The server's live heap is small (~35 MiB) and a turn allocates mostly short-lived objects:
 * - V8 doubles the young generation (up to 2 × 16 MiB) whenever much survives a scavenge and never shrinks it while
 *   the process runs; pinned at its initial size (`--semi-space-growth-factor=1`) an idle server keeps ~10 MiB less
 *   resident. Under load that pin costs CPU (a scavenge every turn or so, each copying the live state of the turns in
 *   flight), so common/idle-memory-release.ts lifts it while the event loop is busy and sets it again, shrinking the
 *   young generation, once the server is idle;
 * - after a full collection V8 lets the old generation grow to up to 4× what survived before collecting again, so a
 *   burst of turns left ~50 MiB of garbage resident; 1.25× keeps the heap near the live size at the cost of a few
 *   more (incremental) collections under load;
 * - --expose-gc lets common/idle-memory-release.ts run one memory-reducing collection once the event loop is idle
 *   after a burst (V8's own memory reducer waits 10–15 s); `gc` is taken from a fresh vm context, so the
 *   application's global scope never has one.
 * Otherwise collection is left to V8. The measurements behind these flags are in bench/README.md.
 */
const HEAP_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=25', '--expose-gc'];

const BUNDLE = join(__dirname, 'server.bundle.js');
const CODE_CACHE = join(__dirname, 'server.bundle.cache');
/** server.ts emits it on `process` once it listens (kept in sync with SERVER_STARTED_EVENT there) */
const SERVER_STARTED_EVENT = 'cashcode:started';
/** the code cache is written this long after the start, so it holds what serving the first requests compiled */
const CODE_CACHE_DELAY_MS = 1_000;

function mtimeMs(file: string): number | null {
  return statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? null;
}

function readCodeCache(): Buffer | undefined {
  try {
    return readFileSync(CODE_CACHE);
  } catch {
    return undefined;
  }
}

/** Writes the code cache atomically; a read-only install simply runs without one. */
function writeCodeCache(script: Script): void {
  try {
    const temp = `${CODE_CACHE}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, CODE_CACHE);
  } catch {
    // no cache: the next start compiles again
  }
}

/** Runs the bundle as a CommonJS module of this directory, with the V8 code cache when there is a valid one. */
function runBundle(): void {
  // scripts/bundle.mjs writes pure ASCII: Latin-1 decoding is a plain copy into a one-byte string
  const source = readFileSync(BUNDLE, 'latin1');
  const cachedData = readCodeCache();
  const script = new Script(Module.wrap(source), { filename: BUNDLE, cachedData });
  const bundleModule = new Module(BUNDLE, module);
  bundleModule.filename = BUNDLE;
  bundleModule.paths = module.paths;
  const compiled = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  compiled.call(bundleModule.exports, bundleModule.exports, Module.createRequire(BUNDLE), bundleModule, BUNDLE, __dirname);
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once(SERVER_STARTED_EVENT, () => setTimeout(() => writeCodeCache(script), CODE_CACHE_DELAY_MS).unref());
  }
}

for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
const bundleTime = mtimeMs(BUNDLE);
const ownTime = mtimeMs(__filename);
if (bundleTime !== null && ownTime !== null && bundleTime >= ownTime) runBundle();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled modules, only when there is no bundle
else require('./server');
