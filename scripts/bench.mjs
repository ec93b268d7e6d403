#!/usr/bin/env node
// `npm run bench`: builds the server if needed, compiles bench/ and runs it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NG_CLI_ANALYTICS: 'false' } });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (!existsSync(join(root, 'apps', 'api', 'dist', 'main.js'))) run('npm', ['run', 'build']);
run('npx', ['tsc', '-p', 'bench/tsconfig.json']);
run(process.execPath, ['--expose-gc', join(root, 'bench', 'dist', 'bench', 'run.js'), ...process.argv.slice(2)]);
