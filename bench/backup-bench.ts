/**
 * Backup of a large data directory (openspec backup): 200,000 history records (200 chats of 1,000, the real
 * history.jsonl format) and a usage ledger of 100,000 model calls, archived by the real command
 * (`apps/api/dist/backup/backup-cli.js`, what `npm run backup` runs) in a child process. Reports its wall time and its
 * peak RSS (VmHWM of the child, read while it runs); targets ≤ 10 s and ≤ 200 MB.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localDay } from '../apps/api/src/usage/usage-calendar';
import { UsageLedger, type NewUsageRecord } from '../apps/api/src/usage/usage-ledger';
import { generateHistories } from './restart-bench';
import type { Figure } from './server-bench';

const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(ROOT, 'apps', 'api', 'dist', 'backup', 'backup-cli.js');
const RECORDS = 200_000;
const LEDGER_ROWS = 100_000;

function ledgerRows(count: number): NewUsageRecord[] {
  const now = new Date();
  const rows: NewUsageRecord[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(now.getTime() - (i % 400) * 86_400_000);
    rows.push({
      at: at.toISOString(),
      day: localDay(at),
      provider: 'openai_compatible',
      model: `model-${i % 5}`,
      purpose: 'chat',
      chat_id: `chat-${i % 200}`,
      prompt_tokens: 1000,
      cached_tokens: 100,
      completion_tokens: 200,
      total_tokens: 1200,
      estimated: false,
      duration_ms: 800,
      outcome: 'ok',
    });
  }
  return rows;
}

/** Peak resident memory of a process so far (VmHWM), in MB; NaN once it is gone. */
async function peakMb(pid: number): Promise<number> {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export async function runBackupBench(log: (line: string) => void): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), 'cashcode-backup-bench-'));
  try {
    const dataDir = join(dir, 'data');
    await generateHistories(dataDir, RECORDS);
    const ledger = new UsageLedger(join(dataDir, 'usage', 'ledger.sqlite'));
    try {
      ledger.insertMany(ledgerRows(LEDGER_ROWS));
    } finally {
      ledger.close();
    }
    const archive = join(dir, 'backup.zip');
    const env = { ...process.env, CASHCODE_DATA_DIR: dataDir, CASHCODE_CONFIG_DIR: join(dir, 'config'), CASHCODE_CONSOLE_LOG_LEVEL: 'error' };
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'backup', archive], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    let peak = 0;
    const timer = setInterval(() => {
      if (child.pid === undefined) return;
      void peakMb(child.pid).then((mb) => {
        if (mb > peak) peak = mb;
      });
    }, 20);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearInterval(timer);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`the backup command exited with ${code}`);
    const size = (await stat(archive)).size / 1024 / 1024;
    log(`backup: ${RECORDS} records + ${LEDGER_ROWS} ledger rows in ${seconds.toFixed(2)} s, peak RSS ${peak.toFixed(1)} MB, archive ${size.toFixed(1)} MB`);
    return [
      { name: `backup of ${RECORDS / 1000}k history records and a ${LEDGER_ROWS / 1000}k-row ledger: time`, value: seconds, unit: 's', target: '<= 10 s', pass: seconds <= 10 },
      { name: 'backup of the same: peak RSS of the backup command', value: peak, unit: 'MB', target: '<= 200 MB', pass: peak > 0 && peak <= 200 },
      { name: 'backup of the same: archive size', value: size, unit: 'MB' },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
