/**
 * Dream persistence (openspec memory; the only Dream code that touches the disk):
 *   <MEMORY_DIR>/.dream_cursor                  compact JSON `{"<chat_id>": <last processed cursor>, …}`
 *   <MEMORY_DIR>/.dreams/runs.jsonl             one DreamRun per line, oldest first (append-only, pruned)
 *   <MEMORY_DIR>/.dreams/snapshots/<run id>.md  MEMORY.md as it was right before that run wrote it
 * `.dreams` is hidden, so it is never listed as a chat. Whole-file writes are atomic; the cursor file is updated on
 * one lane so a Dream run and a session deletion never lose each other's change.
 */
import { isErrorCode, isRecord } from '@cashcode/contracts';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DreamRun } from '@cashcode/contracts';
import { writeFileAtomic } from '../common/atomic-file';
import { KeyedQueue } from '../common/keyed-queue';
import { mkdirPrivate, openPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export const DREAM_CURSOR_FILE = '.dream_cursor';
export const DREAMS_DIR = '.dreams';
const RUNS_FILE = 'runs.jsonl';
const SNAPSHOTS_DIR = 'snapshots';
const PROPOSALS_DIR = 'proposals';
/** runs kept in runs.jsonl (and snapshots kept on disk); older ones are pruned */
export const MAX_DREAM_RUNS = 200;
const RUN_ID_PATTERN = /^\d{13}-[0-9a-f]{8}$/;

export type DreamCursor = Record<string, number>;

function isDreamRun(value: unknown): value is DreamRun {
  if (typeof value !== 'object' || value === null) return false;
  const run = value as Record<string, unknown>;
  return typeof run['id'] === 'string' && typeof run['outcome'] === 'string' && typeof run['started_at'] === 'string';
}

@Injectable()
export class DreamStore {
  private readonly logger = new Logger(DreamStore.name);
  private readonly memoryDir: string;
  private readonly dreamsDir: string;
  /** one lane for the cursor file, one for the runs file */
  private readonly lanes = new KeyedQueue<'cursor' | 'runs'>();
  /** runs kept; tests lower it */
  maxRuns = MAX_DREAM_RUNS;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.memoryDir = config.memoryDir;
    this.dreamsDir = join(config.memoryDir, DREAMS_DIR);
  }

  /** A new sortable run id `<epoch ms>-<8 hex>`. */
  newRunId(now: Date): string {
    return `${String(now.getTime()).padStart(13, '0')}-${randomBytes(4).toString('hex')}`;
  }

  // ---------------------------------------------------------------------------------------------- cursor

  /** The per-chat Dream cursors; a missing or unreadable file is `{}` (every record is new). */
  async readCursor(): Promise<DreamCursor> {
    let text: string;
    try {
      text = await fs.readFile(join(this.memoryDir, DREAM_CURSOR_FILE), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return {};
      throw error;
    }
    try {
      const value: unknown = JSON.parse(text);
      if (isRecord(value)) {
        const cursor: DreamCursor = {};
        for (const [chatId, raw] of Object.entries(value)) {
          if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) cursor[chatId] = raw;
        }
        return cursor;
      }
    } catch {
      // fall through
    }
    this.logger.warn('event=memory.dream.cursor_invalid action=ignored');
    return {};
  }

  /** Applies `change` to the stored cursor map on the cursor lane and writes it atomically (compact JSON). */
  updateCursor(change: (cursor: DreamCursor) => DreamCursor | null): Promise<void> {
    return this.lanes.run('cursor', async () => {
      const next = change(await this.readCursor());
      if (next === null) return;
      await mkdirPrivate(this.memoryDir);
      await writeFileAtomic(join(this.memoryDir, DREAM_CURSOR_FILE), JSON.stringify(next));
    });
  }

  // ---------------------------------------------------------------------------------------------- runs

  /** Appends a run record; prunes the oldest runs and their snapshots beyond `maxRuns`. */
  appendRun(run: DreamRun): Promise<void> {
    return this.lanes.run('runs', async () => {
      await mkdirPrivate(this.dreamsDir);
      const handle = await openPrivate(join(this.dreamsDir, RUNS_FILE), 'a+');
      try {
        // after a crash mid-append the file may end with a torn line: start on a new line
        const { size } = await handle.stat();
        const last = Buffer.alloc(1);
        if (size > 0) await handle.read(last, 0, 1, size - 1);
        const separator = size > 0 && last[0] !== 0x0a ? '\n' : '';
        await handle.writeFile(`${separator}${JSON.stringify(run)}\n`, 'utf8');
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await this.prune();
    });
  }

  /** Runs, newest first (at most `limit`). */
  async listRuns(limit = this.maxRuns): Promise<DreamRun[]> {
    await this.lanes.settled('runs');
    const runs = await this.readRuns();
    return runs.reverse().slice(0, limit);
  }

  async findRun(id: string): Promise<DreamRun | null> {
    if (!RUN_ID_PATTERN.test(id)) return null;
    await this.lanes.settled('runs');
    return (await this.readRuns()).find((run) => run.id === id) ?? null;
  }

  // ---------------------------------------------------------------------------------------------- snapshots

  async saveSnapshot(runId: string, content: string): Promise<void> {
    const dir = join(this.dreamsDir, SNAPSHOTS_DIR);
    await mkdirPrivate(dir);
    await writeFileAtomic(join(dir, `${runId}.md`), content);
  }

  /** The snapshot taken before a run, or null when there is none (never taken, or pruned). */
  readSnapshot(runId: string): Promise<string | null> {
    return this.readRunFile(SNAPSHOTS_DIR, runId);
  }

  /** The proposal of a run held for the owner's review (`<MEMORY_DIR>/.dreams/proposals/<run id>.md`). */
  async saveProposal(runId: string, content: string): Promise<void> {
    const dir = join(this.dreamsDir, PROPOSALS_DIR);
    await mkdirPrivate(dir);
    await writeFileAtomic(join(dir, `${runId}.md`), content);
  }

  readProposal(runId: string): Promise<string | null> {
    return this.readRunFile(PROPOSALS_DIR, runId);
  }

  private async readRunFile(dir: string, runId: string): Promise<string | null> {
    if (!RUN_ID_PATTERN.test(runId)) return null;
    try {
      return await fs.readFile(join(this.dreamsDir, dir, `${runId}.md`), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return null;
      throw error;
    }
  }

  // ---------------------------------------------------------------------------------------------- internals

  private async readRuns(): Promise<DreamRun[]> {
    let text: string;
    try {
      text = await fs.readFile(join(this.dreamsDir, RUNS_FILE), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR')) return [];
      throw error;
    }
    const runs: DreamRun[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const value: unknown = JSON.parse(line);
        if (isDreamRun(value)) runs.push(value);
      } catch {
        // a torn last line (crash mid-append) or garbage: skipped
      }
    }
    return runs;
  }

  /** Keeps the newest `maxRuns` runs (rewritten atomically once the file holds 25% more) and their snapshots. */
  private async prune(): Promise<void> {
    const runs = await this.readRuns();
    if (runs.length <= Math.ceil(this.maxRuns * 1.25)) return;
    const kept = runs.slice(-this.maxRuns);
    await writeFileAtomic(join(this.dreamsDir, RUNS_FILE), kept.map((run) => `${JSON.stringify(run)}\n`).join(''));
    const keep = new Set(kept.map((run) => `${run.id}.md`));
    for (const dir of [SNAPSHOTS_DIR, PROPOSALS_DIR]) {
      let files: string[];
      try {
        files = await fs.readdir(join(this.dreamsDir, dir));
      } catch {
        continue;
      }
      for (const file of files) {
        if (!keep.has(file)) await fs.rm(join(this.dreamsDir, dir, file), { force: true });
      }
    }
    this.logger.log(`event=memory.dream.pruned kept=${kept.length} removed=${runs.length - kept.length}`);
  }
}
