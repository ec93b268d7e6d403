import {
  closeSync,
  lstatSync,
  readdirSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import Transport from 'winston-transport';
import { mkdirPrivateSync, openPrivateSync } from './private-fs';

/** The rendered line winston's format puts on every record (triple-beam's MESSAGE). */
const MESSAGE = Symbol.for('message');

const DAY_SUFFIX = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DailyFileTransportOptions {
  /** directory of the log files; created when missing */
  dirname: string;
  /** `cashcode.log`: the link to the current file; the day files are `<baseName>.YYYY-MM-DD` */
  baseName: string;
  /** N: the active day and the previous N−1 days are kept */
  retentionDays: number;
  /** the chattiest level written (winston level name) */
  level?: string;
  /** epoch milliseconds; decides the day file and when to rotate (tests inject a clock) */
  now?: () => number;
}

function pad(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

/** `YYYY-MM-DD` of the local day `date` falls in. */
function localDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Whether `YYYY-MM-DD` names a real calendar day (so that `cashcode.log.2024-13-45` is not taken for an archive). */
function isCalendarDay(day: string): boolean {
  const match = DAY_SUFFIX.exec(day);
  if (!match) return false;
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return localDay(date) === day;
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (error instanceof Error ? error.name : 'unknown error');
}

/**
 * One day file, opened for appending. Lines handed to `append` during one event-loop turn reach the file in one
 * write (flushed by `setImmediate`). The write is synchronous, as pino's default destination does: appending a few
 * hundred bytes to a local file is a copy into the page cache (microseconds), while an asynchronous write costs a
 * thread-pool round trip — a wake-up, a context switch and a completion event — which on a small machine is slower
 * than the write itself. `close` writes what is pending and closes the descriptor.
 */
class DayFile {
  private pending = '';
  private flushScheduled = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly onWriteResult: (path: string, error: unknown) => void,
  ) {}

  append(text: string): void {
    if (this.closed) return;
    this.pending += text;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // already gone: nothing left to write
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending === '' || this.closed) return;
    const data = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    try {
      let offset = 0;
      while (offset < data.length) {
        const written = writeSync(this.fd, data, offset, data.length - offset);
        if (written <= 0) throw new Error('the log write made no progress');
        offset += written;
      }
      this.onWriteResult(this.path, null);
    } catch (error) {
      this.onWriteResult(this.path, error); // this batch is lost; later ones are tried again
    }
  }
}

/**
 * Winston transport for the runtime log file (spec §14): `<dirname>/<baseName>.YYYY-MM-DD` for the local day, appended
 * across restarts, with `<dirname>/<baseName>` a symlink to it. The day changes at the first record after local
 * midnight: the next midnight is kept as a number, so each record costs one comparison; passing it switches to the new
 * day's file, moves the link, and deletes the day files older than the retention (as at startup). Only names with the
 * exact date suffix are ever deleted.
 *
 * Failing to create the directory or open the file throws from the constructor (startup aborts); a failed write later
 * is reported once on stderr and never crashes the server.
 */
export class DailyFileTransport extends Transport {
  private readonly dirname: string;
  private readonly baseName: string;
  private readonly retentionDays: number;
  private readonly now: () => number;
  private file: DayFile;
  /** epoch ms of the local midnight that ends the current file's day */
  private nextRotationAt: number;
  /** set by closeFile: later records are dropped (winston's Transport has its own `closed`) */
  private fileClosed = false;
  /** a write error was reported and no write has succeeded since */
  private writeErrorReported = false;

  constructor(options: DailyFileTransportOptions) {
    super({ level: options.level });
    this.dirname = options.dirname;
    this.baseName = options.baseName;
    this.retentionDays = Math.max(1, Math.floor(options.retentionDays));
    this.now = options.now ?? Date.now;
    mkdirPrivateSync(this.dirname);
    const now = new Date(this.now());
    this.file = this.openDay(now);
    this.nextRotationAt = nextLocalMidnight(now);
    this.linkCurrent();
    this.deleteExpired(now);
  }

  /** Path of the file being written. */
  get currentPath(): string {
    return this.file.path;
  }

  override log(info: Record<string | symbol, unknown>, next: () => void): void {
    if (!this.fileClosed) {
      if (this.now() >= this.nextRotationAt) this.rotate();
      this.file.append(`${String(info[MESSAGE])}\n`);
    }
    this.emit('logged', info);
    next();
  }

  /** Writable hook, before 'finish' (winston ends every transport when the logger ends). */
  override _final(callback: (error?: Error | null) => void): void {
    void this.closeFile().then(() => callback());
  }

  /** Writes what is pending and closes the file; resolves once every line handed to the transport is in it. */
  closeFile(): Promise<void> {
    this.fileClosed = true;
    this.file.close();
    return Promise.resolve();
  }

  private rotate(): void {
    const now = new Date(this.now());
    let file: DayFile;
    try {
      file = this.openDay(now);
    } catch (error) {
      // Keep writing to the current file and try again in a minute.
      process.stderr.write(`cashcode: cannot open the new log file (${describeFsError(error)}); still writing to ${this.file.path}\n`);
      this.nextRotationAt = this.now() + 60_000;
      return;
    }
    this.file.close();
    this.file = file;
    this.nextRotationAt = nextLocalMidnight(now);
    this.linkCurrent();
    this.deleteExpired(now);
  }

  private openDay(now: Date): DayFile {
    const path = join(this.dirname, `${this.baseName}.${localDay(now)}`);
    const fd = openPrivateSync(path, 'a');
    return new DayFile(path, fd, (failedPath, error) => this.onWriteResult(failedPath, error));
  }

  /**
   * Points `<baseName>` at the current file: a temporary link renamed over it (atomic). A regular file of that name is
   * left alone; where symlinks are not supported there is no link.
   */
  private linkCurrent(): void {
    const link = join(this.dirname, this.baseName);
    try {
      if (!lstatSync(link).isSymbolicLink()) return;
    } catch {
      // missing: created below
    }
    const temp = join(this.dirname, `.${this.baseName}.${process.pid}.link`);
    try {
      try {
        unlinkSync(temp);
      } catch {
        // not left over
      }
      symlinkSync(basename(this.file.path), temp);
      renameSync(temp, link);
    } catch {
      try {
        unlinkSync(temp);
      } catch {
        // nothing to remove
      }
    }
  }

  /** Deletes `<baseName>.YYYY-MM-DD` files older than the retention; every other file is left alone. */
  private deleteExpired(now: Date): void {
    const oldestKept = localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - (this.retentionDays - 1)));
    const prefix = `${this.baseName}.`;
    let names: string[];
    try {
      names = readdirSync(this.dirname);
    } catch (error) {
      process.stderr.write(`cashcode: cannot list the log directory for cleanup (${describeFsError(error)})\n`);
      return;
    }
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const day = name.slice(prefix.length);
      if (!isCalendarDay(day) || day >= oldestKept) continue;
      try {
        unlinkSync(join(this.dirname, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          process.stderr.write(`cashcode: cannot delete the expired log file ${name} (${describeFsError(error)})\n`);
        }
      }
    }
  }

  private onWriteResult(path: string, error: unknown): void {
    if (error === null) {
      this.writeErrorReported = false;
    } else if (!this.writeErrorReported) {
      this.writeErrorReported = true;
      process.stderr.write(`cashcode: writing the log file ${path} failed (${describeFsError(error)}); lines are lost until it works again\n`);
    }
  }
}

/** Epoch ms of the first local midnight after `date`. */
function nextLocalMidnight(date: Date): number {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + 1).getTime();
}
