/**
 * Restart benchmarks of a real server process (apps/api/dist/main.js) against the fake model server, on data
 * directories holding 0, 20k and 200k history records (written in the real history.jsonl format, streamed):
 * - start → health ok → first turn done, on a warm start (the second start of the data directory: the persisted
 *   session index is current), as a ratio to the same figure on an empty data directory (target ≤ 1.2× at 20k and 200k);
 * - the cold build of the session index (first start of the data directory), from the `memory.session_index.built`
 *   log line;
 * - RSS with 100k records indexed (after a search answered), and the size of the index file next to the histories'.
 * CASHCODE_BENCH_QUICK=1: one warm start per size instead of seven.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeModelServer } from '../apps/api/test/support/fake-model-server';
import { sentenceMaker } from './memory-bench';
import { BenchClient, configure, startServer, type Figure, type RunningServer } from './server-bench';

const RECORDS_PER_CHAT = 1000;
const TIMESTAMP = '2026-07-26 12:00';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * Writes `records` user/assistant records into `<dataDir>/memory/chat-<n>/history.jsonl` (1,000 per chat, about 1 KB
 * per record on average, like the 19.6 MB of 20k records of a real history), streamed so 200k stays fast.
 */
export async function generateHistories(dataDir: string, records: number): Promise<void> {
  const sentence = sentenceMaker(11);
  for (let chat = 0; chat * RECORDS_PER_CHAT < records; chat++) {
    const dir = join(dataDir, 'memory', `chat-${chat}`);
    await mkdir(dir, { recursive: true });
    const out = createWriteStream(join(dir, 'history.jsonl'));
    const count = Math.min(RECORDS_PER_CHAT, records - chat * RECORDS_PER_CHAT);
    for (let cursor = 1; cursor <= count; cursor++) {
      const role = cursor % 2 === 1 ? 'user' : 'assistant';
      const line = `${JSON.stringify({ cursor, timestamp: TIMESTAMP, role, content: sentence(role === 'user' ? 30 : 260) })}\n`;
      if (!out.write(line)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    await writeFile(join(dir, 'metadata.json'), JSON.stringify({ title: `Chat ${chat}` }));
  }
}

/** The duration_ms of the last `memory.session_index.built` line of the server's log, once it is there. */
async function indexBuiltMs(dataDir: string, timeoutMs = 120_000): Promise<number | null> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const logDir = join(dataDir, 'logs');
    let text = '';
    for (const name of await readdir(logDir).catch(() => [] as string[])) {
      if (name.startsWith('cashcode.log.')) text += await readFile(join(logDir, name), 'utf8');
    }
    const matches = [...text.matchAll(/memory\.session_index\.built [^\n]*?duration_ms=(\d+)/g)];
    const last = matches.at(-1);
    if (last) return Number(last[1]);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

interface StartFigures {
  healthMs: number;
  firstDoneMs: number;
  server: RunningServer;
}

/** Starts the server on the data directory; start → health, then health → the first turn of a new chat done. */
async function startAndTurn(dataDir: string, configDir: string, fake: FakeModelServer, configureFirst: boolean): Promise<StartFigures> {
  const server = await startServer({ CASHCODE_DATA_DIR: dataDir, CASHCODE_CONFIG_DIR: configDir });
  const healthyAt = performance.now();
  if (configureFirst) await configure(server, fake);
  const client = await BenchClient.connect(server.wsUrl);
  const turn = await client.turn('hello after a restart');
  client.close();
  if (turn.error) throw new Error(`first turn failed: ${turn.error}`);
  return { healthMs: server.startToHealthyMs, firstDoneMs: performance.now() - healthyAt, server };
}

export async function runRestartBench(log: (line: string) => void): Promise<Figure[]> {
  const quick = process.env['CASHCODE_BENCH_QUICK'] === '1';
  const figures: Figure[] = [];
  const fake = await FakeModelServer.start();
  fake.setHandler(() => ({ content: 'Hello again.' }));
  const root = await mkdtemp(join(tmpdir(), 'cashcode-restart-bench-'));
  const configDir = join(root, 'config');
  let configured = false;
  try {
    const sizes = [0, 20_000, 200_000];
    // medians of 7: a first turn takes ~30 ms and a shared VM's start-to-start spread is several ms
    const warmStarts = quick ? 1 : 7;
    let emptyFirstDone = NaN;
    for (const records of sizes) {
      const dataDir = join(root, `data-${records}`);
      let started = performance.now();
      await generateHistories(dataDir, records);
      log(`restart: ${records} records generated in ${(performance.now() - started).toFixed(0)} ms`);

      // cold: the first start builds the index; wait until it is built before stopping
      started = performance.now();
      const cold = await startAndTurn(dataDir, configDir, fake, !configured);
      configured = true;
      const built = await indexBuiltMs(dataDir);
      await cold.server.stop();
      log(
        `restart ${records}: cold start health ${cold.healthMs.toFixed(0)} ms, health → first done ${cold.firstDoneMs.toFixed(0)} ms, index built in ${built ?? '?'} ms`,
      );
      if (records > 0 && built !== null) figures.push({ name: `cold session index build, ${records} records`, value: built, unit: 'ms' });

      const health: number[] = [];
      const firstDone: number[] = [];
      for (let i = 0; i < warmStarts; i++) {
        const warm = await startAndTurn(dataDir, configDir, fake, false);
        health.push(warm.healthMs);
        firstDone.push(warm.firstDoneMs);
        await warm.server.stop();
      }
      const firstDoneMs = median(firstDone);
      if (records === 0) emptyFirstDone = firstDoneMs;
      log(`restart ${records}: warm start health ${median(health).toFixed(0)} ms, health → first done ${firstDoneMs.toFixed(0)} ms`);
      figures.push({ name: `warm restart → health, ${records} records`, value: median(health), unit: 'ms' });
      figures.push({ name: `warm restart health → first done, ${records} records`, value: firstDoneMs, unit: 'ms' });
      if (records > 0) {
        const ratio = firstDoneMs / emptyFirstDone;
        figures.push({
          name: `warm restart health → first done, ${records} records / empty data dir`,
          value: ratio,
          unit: '×',
          target: '≤ 1.2×',
          pass: ratio <= 1.2,
        });
      }
      await rm(dataDir, { recursive: true, force: true });
    }

    {
      // RSS with 100k records indexed: a warm start, then a search (it answers once the index is ready)
      const dataDir = join(root, 'data-rss');
      await generateHistories(dataDir, 100_000);
      const first = await startAndTurn(dataDir, configDir, fake, false);
      await indexBuiltMs(dataDir);
      await first.server.stop();
      const warm = await startAndTurn(dataDir, configDir, fake, false);
      const search = await fetch(`${warm.server.httpUrl}/api/sessions/search?q=${encodeURIComponent('kalo mine')}`);
      if (!search.ok) throw new Error(`search failed: ${search.status}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rss = await rssMb(warm.server.child.pid!);
      await warm.server.stop();
      figures.push({ name: 'RSS with 100k records indexed', value: rss, unit: 'MB' });
      log(`restart: RSS with 100k records indexed ${rss.toFixed(1)} MB`);
      const indexFile = join(dataDir, 'memory-index', 'sessions.sqlite');
      let indexBytes = 0;
      for (const path of [indexFile, `${indexFile}-wal`]) indexBytes += (await stat(path).catch(() => ({ size: 0 }))).size;
      let historyBytes = 0;
      for (const chat of await readdir(join(dataDir, 'memory'))) {
        historyBytes += (await stat(join(dataDir, 'memory', chat, 'history.jsonl')).catch(() => ({ size: 0 }))).size;
      }
      figures.push({ name: 'session index file, 100k records', value: indexBytes / (1024 * 1024), unit: 'MB', note: `histories: ${(historyBytes / (1024 * 1024)).toFixed(0)} MB` });
      log(`restart: index file ${(indexBytes / (1024 * 1024)).toFixed(1)} MB for ${(historyBytes / (1024 * 1024)).toFixed(1)} MB of histories`);
    }
  } finally {
    await fake.close();
    await rm(root, { recursive: true, force: true });
  }
  return figures;
}
