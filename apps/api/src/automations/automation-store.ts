/**
 * The automations on disk (ARCHITECTURE.md "On-disk layout"): `<data>/automations/automations.json` holds every
 * automation with its scheduling state (replaced atomically, one write at a time), and
 * `<data>/automations/runs/<id>.jsonl` the runs of one automation, append-only: a run is appended when it starts and
 * again when it ends (the last line of a run id wins). The directory is one of the paths the model's file tools and the
 * exec sandbox refuse (what the model may schedule is the owner's to decide).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AutomationInput, AutomationRun, AutomationSource } from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { SerialQueue } from '../common/keyed-queue';
import { mkdirPrivate, writeFilePrivate } from '../common/private-fs';

export const AUTOMATIONS_FILE_VERSION = 1;

/** One automation as stored: what the owner edits, plus its identity and scheduling state. */
export interface StoredAutomation extends AutomationInput {
  id: string;
  source: AutomationSource;
  created_at: string;
  updated_at: string;
  /** ISO: the due time the schedule counts from (an interval's last due time, or when it was created or changed) */
  anchor_at: string;
  /** ISO: the next due time as last planned (null: none); a past one at start is a missed run */
  next_run_at: string | null;
}

interface AutomationsFile {
  version: number;
  automations: StoredAutomation[];
}

/** Automation ids: `a` and 16 hex digits (they are part of file names and chat ids). */
export const AUTOMATION_ID_PATTERN = /^a[0-9a-f]{16}$/;

export class AutomationStore {
  readonly dir: string;
  private readonly file: string;
  private readonly runsDir: string;
  private readonly writes = new SerialQueue();

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'automations');
    this.file = path.join(this.dir, 'automations.json');
    this.runsDir = path.join(this.dir, 'runs');
  }

  /** Every stored automation; an absent file is an empty list, an unreadable one an error (nothing is overwritten). */
  async load(): Promise<StoredAutomation[]> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<AutomationsFile>;
    if (parsed.version !== AUTOMATIONS_FILE_VERSION || !Array.isArray(parsed.automations)) {
      throw new Error(`${this.file}: not an automations file of version ${AUTOMATIONS_FILE_VERSION}`);
    }
    return parsed.automations.filter((entry) => typeof entry?.id === 'string' && AUTOMATION_ID_PATTERN.test(entry.id));
  }

  /** Replaces the file with `automations` (atomic; writes are serialised so the last one wins). */
  save(automations: readonly StoredAutomation[]): Promise<void> {
    const body: AutomationsFile = { version: AUTOMATIONS_FILE_VERSION, automations: [...automations] };
    return this.writes.run(async () => {
      await mkdirPrivate(this.dir);
      await writeJsonAtomic(this.file, body);
    });
  }

  /** Appends a run's state (its start, then its end). */
  async appendRun(run: AutomationRun): Promise<void> {
    await mkdirPrivate(this.runsDir);
    await writeFilePrivate(this.runsFile(run.automation_id), `${JSON.stringify(run)}\n`, 'a');
  }

  /** The runs of an automation, newest first (the last line of each run id). */
  async runs(automationId: string): Promise<AutomationRun[]> {
    let text: string;
    try {
      text = await fs.readFile(this.runsFile(automationId), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const byId = new Map<string, AutomationRun>();
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const run = JSON.parse(line) as AutomationRun;
        if (typeof run?.id === 'string') byId.set(run.id, run);
      } catch {
        // a line torn by a crash mid-append: the run's earlier line stands
      }
    }
    return [...byId.values()].sort(newestFirst);
  }

  /** Removes the runs of a deleted automation. */
  async deleteRuns(automationId: string): Promise<void> {
    await fs.rm(this.runsFile(automationId), { force: true });
  }

  private runsFile(automationId: string): string {
    if (!AUTOMATION_ID_PATTERN.test(automationId)) throw new Error('invalid automation id');
    return path.join(this.runsDir, `${automationId}.jsonl`);
  }
}

/** Newest first by start, then by id (runs started in the same millisecond keep a stable order). */
export function newestFirst(a: AutomationRun, b: AutomationRun): number {
  const byStart = Date.parse(b.started_at) - Date.parse(a.started_at);
  if (byStart !== 0) return byStart;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
