/**
 * Skills benchmarks, in process against real files in a temp directory: a cold catalog refresh over 2,000 packages
 * (scan, read, validate, precedence, availability, BM25 indexes) and a no-change incremental refresh; catalog search
 * over those 2,000 Skills (p50/p95 over 300 queries); and the import of a ~10 MiB ZIP package through the same steps
 * as `POST /api/skills/import` (yauzl checks and extraction into a hidden staging directory, package validation,
 * `_meta.json`, atomic rename, catalog refresh); and the import of the largest published fixture
 * (`apps/api/test/fixtures/skills/anthropics/skill-creator`, Apache-2.0) into a catalog of 2,000 Skills, refresh
 * included.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Logger } from '@nestjs/common';
import { ZipFile } from 'yazl';
import { extractSkillArchive } from '../apps/api/src/skills/skill-archive';
import { SkillCatalog } from '../apps/api/src/skills/skill-catalog';
import { SkillStore } from '../apps/api/src/skills/skill-store';
import type { Figure } from './server-bench';

const SKILL_COUNT = 2000;
const TOPICS = [
  'weather', 'calendar', 'email', 'invoice', 'ticket', 'repository', 'issue', 'document', 'spreadsheet', 'contact',
  'order', 'payment', 'shipment', 'playlist', 'photo', 'note', 'task', 'project', 'meeting', 'message', 'chart',
  'report', 'translation', 'summary', 'recipe', 'travel', 'budget', 'fitness', 'study', 'code review',
];
const VERBS = ['create', 'analyse', 'summarise', 'plan', 'convert', 'review', 'draft', 'track', 'search', 'clean'];
const WORDS = Array.from({ length: 300 }, (_, i) => `word${i.toString(36)}`);
const CJK = ['天气预报', '日历事件', '电子邮件', '文件搜索', '项目任务', '认知扭曲'];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** deterministic pseudo-random numbers */
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

function skillText(index: number, random: () => number): { name: string; text: string } {
  const topic = pick(TOPICS, random);
  const verb = pick(VERBS, random);
  const name = `${verb}-${topic.replace(/\s+/g, '-')}-${index}`;
  const words = Array.from({ length: 12 }, () => pick(WORDS, random)).join(' ');
  const tags = [topic, verb, pick(WORDS, random), ...(random() < 0.1 ? [pick(CJK, random)] : [])];
  const text = [
    '---',
    `name: ${name}`,
    `display_name: ${verb} ${topic} ${index}`,
    `description: ${verb} ${topic} items quickly; ${words}`,
    `tags: [${tags.map((tag) => JSON.stringify(tag)).join(', ')}]`,
    `triggers: [${JSON.stringify(`${verb} my ${topic}`)}]`,
    'requires:',
    '  tools: [read_file, web_fetch]',
    ...(index % 7 === 0 ? ['  bins: [definitely-not-installed]'] : []),
    '---',
    '',
    `# ${verb} ${topic}`,
    '',
    ...Array.from({ length: 30 }, (_, line) => `${line + 1}. ${Array.from({ length: 10 }, () => pick(WORDS, random)).join(' ')}`),
    '',
  ].join('\n');
  return { name, text };
}

async function writeCatalogFixture(root: string): Promise<void> {
  const random = rng(42);
  const userRoot = join(root, 'user');
  await mkdir(userRoot, { recursive: true });
  const batch: Promise<void>[] = [];
  for (let i = 0; i < SKILL_COUNT; i++) {
    const { name, text } = skillText(i, random);
    const dir = join(userRoot, name);
    batch.push(
      (async () => {
        await mkdir(join(dir, 'references'), { recursive: true });
        await writeFile(join(dir, 'SKILL.md'), text);
        if (i % 2 === 0) await writeFile(join(dir, 'references', 'guide.md'), `# Guide ${i}\n`);
      })(),
    );
    if (batch.length >= 64) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}

function newStore(root: string): SkillStore {
  return new SkillStore({
    builtin: join(root, 'builtin'),
    user: join(root, 'user'),
    agent: join(root, 'agent'),
    snapshots: join(root, 'snapshots'),
  });
}

function newCatalog(store: SkillStore): SkillCatalog {
  return new SkillCatalog(
    store,
    { hasTool: () => true, mcpServerConfigured: () => false },
    { binPath: process.env['PATH'] ?? '', envNames: new Set() },
  );
}

async function benchCatalog(root: string, log: (line: string) => void): Promise<Figure[]> {
  await writeCatalogFixture(root);
  const store = newStore(root);
  await store.prepare();
  // first pass warms the page cache and the JIT, like a server that has been running
  await newCatalog(store).refresh();
  const cold: number[] = [];
  let catalog = newCatalog(store);
  for (let i = 0; i < 3; i++) {
    catalog = newCatalog(store);
    const started = performance.now();
    await catalog.refresh();
    cold.push(performance.now() - started);
  }
  if (catalog.size !== SKILL_COUNT) throw new Error(`expected ${SKILL_COUNT} skills, got ${catalog.size}`);
  const incremental: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await catalog.refresh();
    incremental.push(performance.now() - started);
  }
  const random = rng(7);
  const queries = Array.from({ length: 300 }, (_, i) =>
    i % 10 === 0 ? pick(CJK, random) : `${pick(VERBS, random)} ${pick(TOPICS, random)} ${pick(WORDS, random)}`,
  );
  for (const query of queries.slice(0, 30)) catalog.search(query, { includeDisabled: false, limit: 8 });
  const times: number[] = [];
  let hits = 0;
  for (const query of queries) {
    const started = performance.now();
    hits += catalog.search(query, { includeDisabled: false, limit: 8 }).length;
    times.push(performance.now() - started);
  }
  const coldMs = median(cold);
  const p50 = median(times);
  log(`skills: cold refresh ${coldMs.toFixed(0)} ms, incremental ${median(incremental).toFixed(1)} ms, search p50 ${p50.toFixed(3)} ms (${hits} hits)`);
  return [
    {
      name: `skill catalog refresh, ${SKILL_COUNT} packages (cold catalog)`,
      value: coldMs,
      unit: 'ms',
      target: '≤ 1000 ms',
      pass: coldMs <= 1000,
    },
    {
      name: `skill catalog refresh, ${SKILL_COUNT} packages (nothing changed)`,
      value: median(incremental),
      unit: 'ms',
      note: 'fingerprints only; what GET /api/skills pays',
    },
    {
      name: `skill search p50, ${SKILL_COUNT} skills`,
      value: p50,
      unit: 'ms',
      target: '≤ 10 ms',
      pass: p50 <= 10,
    },
    { name: `skill search p95, ${SKILL_COUNT} skills`, value: percentile(times, 95), unit: 'ms' },
  ];
}

function buildZip(entries: { name: string; data: Buffer }[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const entry of entries) zip.addBuffer(entry.data, entry.name, { compress: false });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

async function benchImport(root: string, log: (line: string) => void): Promise<Figure[]> {
  const entries = [
    {
      name: 'big-package/SKILL.md',
      data: Buffer.from('---\nname: big-package\ndescription: A large package\n---\n\n# Big\n\nUse the assets.\n'),
    },
  ];
  // incompressible assets stored as-is: the archive itself is ~10 MiB
  for (let i = 0; i < 55; i++) entries.push({ name: `big-package/assets/blob-${i}.bin`, data: randomBytes(190_000) });
  const zip = await buildZip(entries);
  if (zip.length > 10 * 1024 * 1024) throw new Error('the bench archive exceeds 10 MiB');
  const store = newStore(root);
  await store.prepare();
  const catalog = newCatalog(store);
  await catalog.refresh();
  const times: number[] = [];
  for (let run = 0; run < 6; run++) {
    const started = performance.now();
    const staged = await store.stage('user', 'import');
    try {
      const { manifest } = await extractSkillArchive(zip, staged);
      const checked = await store.readStaged(staged, manifest.name);
      if (!checked.ok) throw new Error(checked.error);
      await staged.writeMeta({ source: 'user', enabled: true, storage_version: 1, updated_at: Date.now() / 1000, agentCreated: false });
      if (!(await store.publishNew(staged, manifest.name))) throw new Error('name taken');
      catalog.invalidate('user', manifest.name);
      await catalog.refresh();
    } finally {
      await staged.discard();
    }
    times.push(performance.now() - started);
    await store.remove('user', 'big-package');
    catalog.invalidate('user', 'big-package');
    await catalog.refresh();
  }
  const value = median(times.slice(1));
  log(`skills: import of a ${(zip.length / 1024 / 1024).toFixed(1)} MiB ZIP ${value.toFixed(0)} ms`);
  return [
    {
      name: `skill ZIP import, ${(zip.length / 1024 / 1024).toFixed(1)} MiB package (56 files)`,
      value,
      unit: 'ms',
      target: '≤ 1000 ms',
      pass: value <= 1000,
    },
  ];
}

/** compiled to bench/dist/bench/: the repository root is three levels up */
const PUBLISHED_FIXTURE = join(__dirname, '..', '..', '..', 'apps', 'api', 'test', 'fixtures', 'skills', 'anthropics', 'skill-creator');

async function folderEntries(dir: string, prefix: string): Promise<{ name: string; data: Buffer }[]> {
  const out: { name: string; data: Buffer }[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out.push({ name: `${prefix}${relative(dir, full).split('\\').join('/')}`, data: await readFile(full) });
    }
  };
  await walk(dir);
  return out;
}

/** The published skill-creator (the largest real fixture) imported into the 2,000-Skill catalog of benchCatalog. */
async function benchPublishedImport(root: string, log: (line: string) => void): Promise<Figure[]> {
  const entries = await folderEntries(PUBLISHED_FIXTURE, 'skill-creator/');
  const zip = await buildZip(entries);
  const store = newStore(root);
  await store.prepare();
  const catalog = newCatalog(store);
  await catalog.refresh();
  const times: number[] = [];
  for (let run = 0; run < 6; run++) {
    const started = performance.now();
    const staged = await store.stage('user', 'import');
    try {
      const { manifest } = await extractSkillArchive(zip, staged);
      const checked = await store.readStaged(staged, manifest.name);
      if (!checked.ok) throw new Error(checked.error);
      await staged.writeMeta({ source: 'user', enabled: true, storage_version: 1, updated_at: Date.now() / 1000, agentCreated: false });
      if (!(await store.publishNew(staged, manifest.name))) throw new Error('name taken');
      catalog.invalidate('user', manifest.name);
      await catalog.refresh();
    } finally {
      await staged.discard();
    }
    times.push(performance.now() - started);
    if (catalog.size !== SKILL_COUNT + 1) throw new Error(`expected ${SKILL_COUNT + 1} skills, got ${catalog.size}`);
    await store.remove('user', 'skill-creator');
    catalog.invalidate('user', 'skill-creator');
    await catalog.refresh();
  }
  const value = median(times.slice(1));
  const kib = (zip.length / 1024).toFixed(0);
  log(`skills: import of the published skill-creator (${entries.length} files, ${kib} KiB ZIP) into ${SKILL_COUNT} Skills ${value.toFixed(0)} ms`);
  return [
    {
      name: `published skill-creator import (${entries.length} files, ${kib} KiB ZIP) + catalog refresh, ${SKILL_COUNT} Skills`,
      value,
      unit: 'ms',
      target: '≤ 1000 ms',
      pass: value <= 1000,
    },
  ];
}

export async function runSkillsBench(log: (line: string) => void): Promise<Figure[]> {
  Logger.overrideLogger(['error']);
  const catalogRoot = await mkdtemp(join(tmpdir(), 'cashcode-bench-skills-'));
  const importRoot = await mkdtemp(join(tmpdir(), 'cashcode-bench-import-'));
  try {
    return [
      ...(await benchCatalog(catalogRoot, log)),
      ...(await benchPublishedImport(catalogRoot, log)),
      ...(await benchImport(importRoot, log)),
    ];
  } finally {
    await rm(catalogRoot, { recursive: true, force: true });
    await rm(importRoot, { recursive: true, force: true });
  }
}
