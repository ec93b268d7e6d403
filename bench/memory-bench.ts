/**
 * Memory benchmarks, in process against real files in a temp dir:
 * - chat load (smart load from the end of history.jsonl) at 1k, 10k and 100k records: must stay flat (100k within 2×
 *   of 1k, ≤ 50 ms). Histories are consolidated the way the Consolidator leaves them (a summary record with
 *   keep_from_cursor every time the kept part passes ~40,000 characters), so the kept tail has the same size at
 *   every length and only the file grows;
 * - session_search (the persisted SQLite FTS5 index of user/assistant records) over 100k records: p50 ≤ 20 ms (the
 *   build is a cold build of the index file; the heap figure is what the index keeps in the JS heap);
 * - the index's incremental update per appended turn (user + assistant record): ≤ 1 ms.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../apps/api/src/config/app-config';
import { createMemoryStores } from '../apps/api/src/memory/memory-stores';
import type { HistoryRecord } from '../apps/api/src/memory/memory.types';
import { SessionIndex } from '../apps/api/src/memory/session-index';
import type { Figure } from './server-bench';

const TIMESTAMP = '2026-07-26 12:00';
/** characters kept after each simulated consolidation (the Consolidator keeps about half of 40,000) */
const KEPT_CHARS = 20_000;
const CONSOLIDATION_THRESHOLD = 40_000;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A deterministic pseudo-random generator (mulberry32), so every run indexes the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po', 'qu', 'de', 'fa', 'gi', 'ho', 'ju'];
const CJK = ['机器', '学习', '天气', '预报', '旅行', '京都', '咖啡', '文件', '搜索', '记忆', '项目', '会议'];

/** A vocabulary of 6,000 made-up words; word i is drawn with a Zipf-like weight ~ 1/(i+1). */
function vocabulary(): string[] {
  const words: string[] = [];
  for (let i = 0; words.length < 6000; i++) {
    let n = i;
    let word = '';
    do {
      word += SYLLABLES[n % SYLLABLES.length];
      n = Math.floor(n / SYLLABLES.length);
    } while (n > 0);
    words.push(word.length >= 2 ? word : `${word}x`);
  }
  return words;
}

export function sentenceMaker(seed: number): (words: number) => string {
  const rand = random(seed);
  const vocab = vocabulary();
  const pick = () => vocab[Math.min(vocab.length - 1, Math.floor(Math.exp(rand() * Math.log(vocab.length)) - 1))]!;
  return (count) => {
    const parts: string[] = [];
    for (let i = 0; i < count; i++) parts.push(rand() < 0.05 ? CJK[Math.floor(rand() * CJK.length)]! : pick());
    return parts.join(' ');
  };
}

/** history.jsonl text of `count` records, with summaries as the Consolidator writes them. */
function consolidatedHistory(count: number, sentence: (words: number) => string): string {
  const lines: string[] = [];
  let cursor = 0;
  let keptChars = 0;
  const keptLengths: Array<{ cursor: number; chars: number; role: string }> = [];
  let records = 0;
  while (records < count) {
    const role = records % 2 === 0 ? 'user' : 'assistant';
    const content = sentence(role === 'user' ? 12 : 40);
    cursor++;
    records++;
    const record: HistoryRecord = { cursor, timestamp: TIMESTAMP, role, content };
    lines.push(JSON.stringify(record));
    keptLengths.push({ cursor, chars: content.length, role });
    keptChars += content.length;
    if (keptChars >= CONSOLIDATION_THRESHOLD && role === 'assistant') {
      // keep about KEPT_CHARS from the end, starting at a user record
      let acc = 0;
      let index = keptLengths.length - 1;
      while (index > 0 && acc < KEPT_CHARS) acc += keptLengths[index--]!.chars;
      while (index < keptLengths.length && keptLengths[index]!.role !== 'user') index++;
      const keptStart = keptLengths[index]!.cursor;
      cursor++;
      lines.push(
        JSON.stringify({ cursor, timestamp: TIMESTAMP, role: 'summary', content: sentence(120), keep_from_cursor: keptStart }),
      );
      const kept = keptLengths.slice(index);
      keptLengths.length = 0;
      keptLengths.push(...kept);
      keptChars = kept.reduce((sum, entry) => sum + entry.chars, 0);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function measureChatLoad(root: string, records: number, log: (line: string) => void): Promise<number> {
  const memoryDir = join(root, `load-${records}`);
  await mkdir(join(memoryDir, 'chat'), { recursive: true });
  await writeFile(join(memoryDir, 'chat', 'history.jsonl'), consolidatedHistory(records, sentenceMaker(7)));
  const config = { memoryDir } as AppConfig;
  const times: number[] = [];
  let messages = 0;
  for (let i = 0; i < 60; i++) {
    const stores = createMemoryStores(config);
    const started = performance.now();
    const chat = await stores.history.getChat('chat');
    const elapsed = performance.now() - started;
    if (i >= 10) times.push(elapsed);
    messages = chat.history.length;
  }
  const ms = median(times);
  log(`chat load ${records} records: ${ms.toFixed(2)} ms (${messages} messages kept)`);
  return ms;
}

export async function runMemoryBench(log: (line: string) => void): Promise<Figure[]> {
  const root = await mkdtemp(join(tmpdir(), 'cashcode-memory-bench-'));
  const figures: Figure[] = [];
  // the store and index log per load at debug level: keep the bench output readable
  Logger.overrideLogger(['error', 'warn']);
  try {
    // ---- chat load
    const load1k = await measureChatLoad(root, 1_000, log);
    const load10k = await measureChatLoad(root, 10_000, log);
    const load100k = await measureChatLoad(root, 100_000, log);
    const ratio = load100k / load1k;
    figures.push(
      { name: 'chat load: 1k records', value: load1k, unit: 'ms' },
      { name: 'chat load: 10k records', value: load10k, unit: 'ms' },
      { name: 'chat load: 100k records', value: load100k, unit: 'ms', target: '≤ 50 ms', pass: load100k <= 50 },
      {
        name: 'chat load: 100k / 1k',
        value: ratio,
        unit: '×',
        target: '≤ 2×',
        pass: ratio <= 2,
        note: 'consolidated histories (summary + keep_from_cursor as the Consolidator writes them)',
      },
    );

    // ---- session_search over 100k records: 100 chats × 1,000 records
    const memoryDir = join(root, 'search');
    const sentence = sentenceMaker(42);
    for (let chat = 0; chat < 100; chat++) {
      const dir = join(memoryDir, `chat-${chat}`);
      await mkdir(dir, { recursive: true });
      const lines: string[] = [];
      for (let cursor = 1; cursor <= 1000; cursor++) {
        const role = cursor % 2 === 1 ? 'user' : 'assistant';
        lines.push(JSON.stringify({ cursor, timestamp: TIMESTAMP, role, content: sentence(role === 'user' ? 12 : 40) }));
      }
      await writeFile(join(dir, 'history.jsonl'), `${lines.join('\n')}\n`);
      await writeFile(join(dir, 'metadata.json'), JSON.stringify({ title: `Chat ${chat}` }));
    }
    const stores = createMemoryStores({ memoryDir } as AppConfig);
    const index = new SessionIndex(stores.reader, stores.writer, stores.metadata, stores.chats, { sessionIndexFile: join(root, 'search-index', 'sessions.sqlite') });
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let started = performance.now();
    await index.ready();
    const buildMs = performance.now() - started;
    global.gc?.();
    const heapMb = (process.memoryUsage().heapUsed - heapBefore) / (1024 * 1024);
    log(`session index: ${index.size} records built in ${buildMs.toFixed(0)} ms, ~${heapMb.toFixed(0)} MB heap`);

    const queries: string[] = [];
    for (let i = 0; i < 200; i++) queries.push(sentence(2 + (i % 3)));
    queries.push('机器学习 京都', 'weather forecast', 'kalomi nesa');
    for (const query of queries.slice(0, 20)) await index.search(query, 5);
    const searchTimes: number[] = [];
    for (const query of queries) {
      started = performance.now();
      await index.search(query, 5);
      searchTimes.push(performance.now() - started);
    }
    const p50 = median(searchTimes);
    const p95 = [...searchTimes].sort((a, b) => a - b)[Math.floor(searchTimes.length * 0.95)]!;
    log(`session_search over ${index.size} records: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms`);

    // ---- incremental update per appended turn (user + assistant record)
    const turns = 2000;
    const pending: HistoryRecord[][] = [];
    for (let i = 0; i < turns; i++) {
      const cursor = 1001 + i * 2;
      pending.push([
        { cursor, timestamp: TIMESTAMP, role: 'user', content: sentence(12) },
        { cursor: cursor + 1, timestamp: TIMESTAMP, role: 'assistant', content: sentence(40) },
      ]);
    }
    started = performance.now();
    // positions as an append gives them (the bench measures the index, not the file)
    let offset = 0;
    for (const records of pending) {
      index.addRecords('chat-0', records, records.map((record) => {
        const length = Buffer.byteLength(JSON.stringify(record));
        offset += length + 1;
        return { offset: offset - length - 1, length };
      }));
    }
    const perTurn = (performance.now() - started) / turns;
    index.onModuleDestroy();
    log(`session index update: ${(perTurn * 1000).toFixed(1)} µs per appended turn`);

    figures.push(
      { name: 'session index: build (100k records)', value: buildMs, unit: 'ms' },
      { name: 'session index: heap (100k records)', value: heapMb, unit: 'MB', note: global.gc ? undefined : 'run with --expose-gc for an exact figure' },
      { name: 'session_search over 100k records: p50', value: p50, unit: 'ms', target: '≤ 20 ms', pass: p50 <= 20 },
      { name: 'session_search over 100k records: p95', value: p95, unit: 'ms' },
      { name: 'session index: update per appended turn', value: perTurn, unit: 'ms', target: '≤ 1 ms', pass: perTurn <= 1 },
    );
  } finally {
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
    await rm(root, { recursive: true, force: true });
  }
  return figures;
}
