/**
 * One small owner-only JSON file of channel state (pairings, conversations, the poll offset, settings): read once,
 * kept in memory, and every change written atomically (common/atomic-file.ts) before it is acknowledged. Writes of
 * one file run one after another; a failed write leaves the file and the memory copy as they were.
 */
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { isErrorCode } from '@cashcode/contracts';
import { writeJsonAtomic } from '../common/atomic-file';
import { SerialQueue } from '../common/keyed-queue';
import { mkdirPrivate } from '../common/private-fs';

export class JsonStateFile<T> {
  private value: T | null = null;
  private readonly writes = new SerialQueue();

  constructor(
    readonly path: string,
    /** the state of a missing file, and of one that cannot be read as this state */
    private readonly empty: () => T,
    /** checks and normalises parsed JSON; throws on a file that is not this state */
    private readonly parse: (raw: unknown) => T,
  ) {}

  /** The current state (loaded from disk on first use). */
  async read(): Promise<T> {
    if (this.value !== null) return this.value;
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) throw error;
      this.value = this.empty();
      return this.value;
    }
    try {
      this.value = this.parse(JSON.parse(text));
    } catch {
      this.value = this.empty();
    }
    return this.value;
  }

  /**
   * Applies `change` to a copy of the state and writes it; the new state counts only once it is on disk. `change`
   * returns what the caller wants back (or throws to change nothing).
   */
  update<R>(change: (draft: T) => R): Promise<R> {
    return this.writes.run(async () => {
      const draft = structuredClone(await this.read());
      const result = change(draft);
      await mkdirPrivate(dirname(this.path));
      await writeJsonAtomic(this.path, draft);
      this.value = draft;
      return result;
    });
  }
}
