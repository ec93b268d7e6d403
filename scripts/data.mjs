#!/usr/bin/env node
// `npm run backup -- <archive.zip> [--include-secrets]` and `npm run restore -- <archive.zip> [--force]`: under a
// supported Node.js (fetched like `npm start` does, scripts/node-runtime.mjs) and with the server built, runs
// apps/api/dist/backup/backup-cli.js (openspec backup). The same environment and `.env` as the server's decide the
// directories (CASHCODE_DATA_DIR, MEMORY_DIR, WORKSPACE_DIR, CASHCODE_CONFIG_DIR).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_OUTPUTS, buildIfMissing, ensureSupportedNode, forwardSignalsAndExit, root } from './node-runtime.mjs';

const args = process.argv.slice(2);
await ensureSupportedNode(fileURLToPath(import.meta.url), args);
buildIfMissing(BUILD_OUTPUTS.slice(0, 2));
// relative archive paths are the caller's (npm runs scripts from the repository root; INIT_CWD is where npm was started)
const child = spawn(process.execPath, [join(root, 'apps', 'api', 'dist', 'backup', 'backup-cli.js'), ...args], {
  cwd: process.env.INIT_CWD ?? process.cwd(),
  stdio: 'inherit',
});
forwardSignalsAndExit(child);
