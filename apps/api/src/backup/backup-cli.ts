/**
 * `npm run backup -- <file> [--include-secrets]` and `npm run restore -- <file> [--force]` (scripts/data.mjs runs this
 * file, `apps/api/dist/backup/backup-cli.js`, under a supported Node.js). The directories come from the same
 * environment and `.env` as the server's (config/app-config.ts). A backup works while the server runs; a restore
 * refuses while a server uses the data directory. Exit codes: 0 done, 1 refused or failed, 2 usage.
 */
import { config as loadDotenv } from 'dotenv';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirLockedError } from '../common/data-dir-lock';
import { ConfigError, loadConfig } from '../config/app-config';
import { BackupArchiveError } from './backup-archive-reader';
import { RestoreRefusedError, restoreBackup } from './backup-restore';
import { backupLocations } from './backup-sources';
import { writeBackup } from './backup-writer';
import { appVersion } from './data-format';

/** Repository root: apps/api/dist/backup/backup-cli.js → ../../../.. */
const rootDir = resolve(__dirname, '..', '..', '..', '..');

const USAGE = [
  'usage: npm run backup -- <archive.zip> [--include-secrets]',
  '       npm run restore -- <archive.zip> [--force]',
].join('\n');

function out(line: string): void {
  process.stdout.write(`cashcode: ${line}\n`);
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export interface CliArgs {
  command: 'backup' | 'restore';
  file: string;
  includeSecrets: boolean;
  force: boolean;
}

/** Parses `backup|restore <file> [flags]`; null on a usage error. */
export function parseCliArgs(argv: readonly string[]): CliArgs | null {
  const [command, ...rest] = argv;
  if (command !== 'backup' && command !== 'restore') return null;
  const flags = rest.filter((arg) => arg.startsWith('--'));
  const files = rest.filter((arg) => !arg.startsWith('--'));
  const allowed = command === 'backup' ? ['--include-secrets'] : ['--force'];
  if (files.length !== 1 || flags.some((flag) => !allowed.includes(flag))) return null;
  return { command, file: resolve(files[0] as string), includeSecrets: flags.includes('--include-secrets'), force: flags.includes('--force') };
}

async function main(): Promise<number> {
  const args = parseCliArgs(process.argv.slice(2));
  if (args === null) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  process.umask(0o077);
  const envFile = join(rootDir, '.env');
  if (existsSync(envFile)) loadDotenv({ path: envFile, override: false, quiet: true });
  const config = loadConfig(process.env, rootDir);
  const locations = backupLocations(config);
  if (args.command === 'backup') {
    const started = performance.now();
    const summary = await writeBackup(locations, { target: args.file, includeSecrets: args.includeSecrets, appVersion: appVersion(rootDir) });
    out(
      `backup written to ${args.file}: ${summary.files} files, ${mib(summary.bytes)} (${mib(summary.archiveBytes)} compressed) in ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    out(
      summary.secrets
        ? 'it INCLUDES SECRETS (API keys, the API token, MCP credentials): the file is owner-only (0600); keep it safe'
        : 'secrets (API keys, the API token, MCP credentials) are left out; add --include-secrets to keep them',
    );
    for (const path of summary.skipped) out(`not archived (a symbolic link or special file): ${path}`);
    return 0;
  }
  const result = await restoreBackup(locations, { archive: args.file, force: args.force });
  out(`restored ${result.files} files from ${args.file} (written by CashCode ${result.manifest.app_version} at ${result.manifest.created_at})`);
  for (const aside of result.keptAside) out(`the previous contents are kept in ${aside}`);
  for (const file of result.keptSettings) out(`kept the existing settings/${file} (the archive's copy was not written; --force replaces it)`);
  if (!result.manifest.secrets) out('the archive held no secrets: enter the API keys again in the console (Settings → LLM settings)');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known =
      error instanceof BackupArchiveError ||
      error instanceof RestoreRefusedError ||
      error instanceof DataDirLockedError ||
      error instanceof ConfigError;
    process.stderr.write(`cashcode: ${known ? (error as Error).message : `failed: ${(error as Error)?.stack ?? String(error)}`}\n`);
    process.exit(1);
  },
);
