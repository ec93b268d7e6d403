#!/usr/bin/env node
// Bundles the compiled server (dist/server.js and its dependencies) into dist/server.bundle.js, which dist/main.js runs
// when it is at least as new as itself (see src/main.ts). Part of `npm run build -w @cashcode/api`; needs the tsc output.
//
// Kept out of the bundle (loaded from node_modules when used):
// - optional Nest packages that are not installed (Nest probes them with try/catch);
// - what the server loads lazily on first use (the MCP SDK, turndown): a server that never needs them does not pay
//   for their source text;
// - swagger-ui-dist, which serves files relative to its own directory.
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const entry = join(dist, 'server.js');
const outfile = join(dist, 'server.bundle.js');

statSync(entry); // fails clearly when tsc has not run
const result = await build({
  entryPoints: [entry],
  outfile,
  write: false,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // whitespace, syntax and local names: a third of the source text to parse and keep in memory; class and function
  // names stay (Nest uses them for providers and log contexts)
  minify: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  external: [
    '@nestjs/microservices',
    '@nestjs/microservices/*',
    '@nestjs/websockets/socket-module',
    '@nestjs/platform-socket.io',
    '@fastify/static',
    'class-transformer/storage',
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/*',
    'turndown',
    'playwright-core',
    'playwright-core/*',
    'swagger-ui-dist',
    'swagger-ui-dist/*',
  ],
  // node-fetch 2 (under grammY) reaches Node's deprecated built-in `punycode` through whatwg-url, which prints a
  // DeprecationWarning at every start; the same code from npm (`punycode/`, the package the built-in was taken from)
  // answers the same and warns nothing
  alias: { punycode: 'punycode/' },
  // ESM dependencies use import.meta.url (createRequire, file paths): give them the bundle's own URL
  define: { 'import.meta.url': '__bundleImportMetaUrl' },
  banner: { js: "const __bundleImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// Pure ASCII, so main.js reads it as Latin-1 into a one-byte string (half the memory, and no UTF-8 decoding of
// megabytes at every start). esbuild escapes non-ASCII text except inside regular expression literals (validator's
// locale alphabets); \uXXXX means the same code unit there (and in strings, templates and identifiers).
const [output] = result.outputFiles;
const ascii = output.text.replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
writeFileSync(outfile, ascii, 'latin1');
// a new bundle invalidates the code cache of the old one
rmSync(join(dist, 'server.bundle.cache'), { force: true });

// Warm the V8 code cache: start the bundled server once (temp data and config directories, ports chosen by the
// system), let main.js write dist/server.bundle.cache, stop it. Best effort: without a cache the first start writes it.
const cache = join(dist, 'server.bundle.cache');
const temp = mkdtempSync(join(tmpdir(), 'cashcode-bundle-warmup-'));
const child = spawn(process.execPath, [join(dist, 'main.js')], {
  env: {
    ...process.env,
    CASHCODE_DATA_DIR: join(temp, 'data'),
    CASHCODE_CONFIG_DIR: join(temp, 'config'),
    CASHCODE_HOST: '127.0.0.1',
    CASHCODE_PORT: '0',
    WS_HOST: '127.0.0.1',
    WS_PORT: '0',
    CASHCODE_CONSOLE_LOG_LEVEL: 'error',
  },
  stdio: 'ignore',
});
const deadline = Date.now() + 30_000;
while (!existsSync(cache) && child.exitCode === null && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
if (child.exitCode === null) {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
rmSync(temp, { recursive: true, force: true });
process.stdout.write(existsSync(cache) ? 'bundle: code cache written\n' : 'bundle: no code cache (the first start writes it)\n');
