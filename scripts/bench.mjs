#!/usr/bin/env node
// `npm run bench`: builds the server if needed (and its bundle when stale), compiles bench/ and runs it.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NG_CLI_ANALYTICS: 'false' } });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
const apiDist = join(root, 'apps', 'api', 'dist');
if (!existsSync(join(apiDist, 'main.js'))) run('npm', ['run', 'build']);
// measure what `npm start` runs: the bundled server (a plain tsc build since the last bundle leaves it stale)
const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : -1);
if (mtime(join(apiDist, 'server.bundle.js')) < mtime(join(apiDist, 'main.js'))) run('npm', ['run', 'bundle', '-w', '@cashcode/api']);
run('npx', ['tsc', '-p', 'bench/tsconfig.json']);
run(process.execPath, ['--expose-gc', join(root, 'bench', 'dist', 'bench', 'run.js'), ...process.argv.slice(2)]);
