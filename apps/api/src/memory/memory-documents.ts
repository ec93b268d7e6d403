/**
 * MemoryDocuments: the global Markdown files of the memory directory (openspec memory) — SOUL.md (the persona; the
 * built-in one when missing or blank) and MEMORY.md (long-term memory, global to all chats). Every write of a file runs
 * on that file's lane (save_memory, the REST editor, Dream, a revert), so a read-modify-write never loses a concurrent
 * change. Reads for a turn are cached by file identity: one `stat` per turn while the file is unchanged.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { isErrorCode, type MemoryProvenanceRecord } from '@cashcode/contracts';
import { promises as fs, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/atomic-file';
import { KeyedQueue } from '../common/keyed-queue';
import { mkdirPrivate } from '../common/private-fs';
import { trimTrailing } from '../common/trim';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { localIsoWithOffset } from '../common/local-iso-time';
import { formatLocalMinute } from './local-time';
import { MemoryProvenanceLog } from './memory-provenance';
import { MEMORY_CLOCK, memoryClock, type MemoryClock } from './memory-clock';
import type { LongTermMemorySaveResult } from './memory.types';

/** The built-in persona used when SOUL.md is missing or blank (openspec agent-runner). */
export const DEFAULT_SOUL = [
  'You are CashCode, a capable local-first AI assistant with persistent memory.',
  '',
  '## Tool rules',
  '- Call save_memory when the user explicitly asks you to remember durable information (preferences, facts about',
  '  them, long-lived decisions).',
  '- Do not save temporary queries, small talk or information that only matters for the current conversation.',
  '- Use the available tools when they help you answer accurately; explain briefly what you did.',
].join('\n');

const SOUL_FILE = 'SOUL.md';
const LONG_TERM_FILE = 'MEMORY.md';

/** The global Markdown files of the memory directory that can be read raw and replaced (REST, Dream, revert). */
export type MemoryDocument = 'MEMORY.md' | 'SOUL.md';

/** Where a write of MEMORY.md came from: the provenance record of each entry it adds, without time and text. */
export type MemoryWriteProvenance = Omit<MemoryProvenanceRecord, 'at' | 'entry'>;

/** The non-blank lines of `next` that `previous` does not have (the entries a replacement adds). */
export function addedLines(previous: string, next: string): string[] {
  const before = new Set(previous.split('\n').map((line) => line.trim()));
  return next
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !before.has(line));
}

/** What an update function decided: `null` leaves the file as it is. */
export interface MemoryDocumentUpdate<T> {
  content: string | null;
  result: T;
}

@Injectable()
export class MemoryDocuments implements OnApplicationShutdown {
  private readonly logger = new Logger(MemoryDocuments.name);
  private readonly memoryDir: string;
  private readonly now: MemoryClock;
  /** one lane per document */
  private readonly lanes = new KeyedQueue<MemoryDocument>();
  /** see documentRevision */
  private revision = 0;
  /** SOUL.md / MEMORY.md text with the identity of the file it was read from (readCurrentText) */
  private readonly textCache = new Map<string, { key: string; text: string }>();
  /** the provenance log beside MEMORY.md: one record per entry added (memory-provenance.ts) */
  readonly provenance: MemoryProvenanceLog;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>, @Optional() @Inject(MEMORY_CLOCK) clock?: MemoryClock) {
    this.memoryDir = config.memoryDir;
    this.now = memoryClock(clock);
    this.provenance = new MemoryProvenanceLog(config);
  }

  /**
   * Counts the deliberate edits of MEMORY.md and SOUL.md made through this store (the REST editor, a Dream revert; not
   * save_memory, whose fact the saving chat already has in its conversation, nor a Dream rewrite, which passes
   * `deferred`): a chat's system prompt snapshot is taken again at its next turn when this changed
   * (agent/system-prompt.ts).
   */
  get documentRevision(): number {
    return this.revision;
  }

  /**
   * SOUL.md trimmed, or the built-in English persona when it is missing or blank (openspec agent-runner). Checked on
   * each call (an edit takes effect on the next turn); the text is re-read when the file changed.
   */
  async readSoul(): Promise<string> {
    const soul = (await this.readCurrentText(SOUL_FILE)).trim();
    return soul !== '' ? soul : DEFAULT_SOUL;
  }

  /** MEMORY.md trimmed ('' when missing); global to all chats (openspec memory). Checked on each call like readSoul. */
  async readLongTermMemory(): Promise<string> {
    return (await this.readCurrentText(LONG_TERM_FILE)).trim();
  }

  /**
   * Adds `[YYYY-MM-DD HH:MM] <content>` to MEMORY.md unless the text already occurs in it (openspec builtin-tools).
   * Trailing newlines of the file are collapsed to one separator; the file ends with `\n`; the write is atomic.
   * Calls are serialised, so two concurrent saves never lose each other. `content` must be trimmed and non-empty.
   */
  async saveLongTermMemory(content: string, provenance?: MemoryWriteProvenance): Promise<LongTermMemorySaveResult> {
    return this.lanes.run(LONG_TERM_FILE, async (): Promise<LongTermMemorySaveResult> => {
      const existing = await this.readOptionalText(LONG_TERM_FILE);
      if (existing.includes(content)) return 'duplicate';
      const head = trimTrailing(existing, '\n');
      const line = `[${formatLocalMinute(this.now())}] ${content}`;
      await mkdirPrivate(this.memoryDir);
      await writeFileAtomic(join(this.memoryDir, LONG_TERM_FILE), head === '' ? `${line}\n` : `${head}\n${line}\n`);
      if (provenance) await this.recordProvenance([line], provenance);
      // no revision: the chat that saved it has the fact in its conversation (the tool call), and every chat's
      // snapshot takes it at its next context boundary; a new chat at once (agent/system-prompt.ts)
      this.logger.log(`event=memory.long_term.saved chars=${content.length}`);
      return 'saved';
    });
  }

  /** The raw text of MEMORY.md or SOUL.md ('' when missing), not trimmed. */
  async readDocument(document: MemoryDocument): Promise<string> {
    return this.readOptionalText(document);
  }

  /**
   * Reads the document and lets `update` decide its new content, on the document's lane: serialised with every other
   * write of that file (save_memory, REST edits, Dream, revert), so a read-modify-write never loses a concurrent
   * change. A non-null `content` replaces the file atomically. Errors thrown by `update` leave the file unchanged.
   * `deferred` (a Dream rewrite): the change reaches running chats at their next context boundary only.
   */
  async updateDocument<T>(
    document: MemoryDocument,
    update: (current: string) => Promise<MemoryDocumentUpdate<T>> | MemoryDocumentUpdate<T>,
    options: { deferred?: boolean; provenance?: MemoryWriteProvenance } = {},
  ): Promise<T> {
    return this.lanes.run(document, async (): Promise<T> => {
      const current = await this.readOptionalText(document);
      const decision = await update(current);
      if (decision.content !== null && decision.content !== current) {
        await mkdirPrivate(this.memoryDir);
        await writeFileAtomic(join(this.memoryDir, document), decision.content);
        if (options.deferred !== true) this.revision++;
        if (document === LONG_TERM_FILE && options.provenance) {
          await this.recordProvenance(addedLines(current, decision.content), options.provenance);
        }
        this.logger.log(`event=memory.document.replaced document=${document} chars=${decision.content.length}`);
      }
      return decision.result;
    });
  }

  /**
   * Appends the provenance of entries just written. The entry is already in MEMORY.md: a failure to record it is
   * logged, never undone (memory stays usable; the entry then shows as of unknown source).
   */
  private async recordProvenance(lines: readonly string[], provenance: MemoryWriteProvenance): Promise<void> {
    const at = localIsoWithOffset(this.now(), { millis: true });
    try {
      await this.provenance.append(lines.map((entry) => ({ at, entry, ...provenance })));
    } catch (error) {
      this.logger.error(`event=memory.provenance.write_failed error=${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  }

  /** Lets a write in progress finish before the process exits. */
  async onApplicationShutdown(): Promise<void> {
    await this.lanes.settled();
  }

  /**
   * The current text of a memory-directory file ('' when missing), like readOptionalText, but only one `stat` per
   * call while the file is unchanged: the text is cached with the file's identity (inode, size, mtime, ctime in ns).
   * The stat is synchronous on purpose: a stat of a small local file costs microseconds, less than the thread-pool
   * round trip of an asynchronous one, and this runs on every turn.
   */
  private async readCurrentText(file: string): Promise<string> {
    const path = join(this.memoryDir, file);
    let stat: BigIntStats | undefined;
    try {
      stat = statSync(path, { bigint: true, throwIfNoEntry: false });
    } catch (error) {
      if (!isErrorCode(error, 'ENOTDIR')) throw error;
    }
    if (!stat) {
      this.textCache.delete(file);
      return '';
    }
    if (!stat.isFile()) return this.readOptionalText(file);
    const key = `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    const cached = this.textCache.get(file);
    if (cached && cached.key === key) return cached.text;
    const text = await this.readOptionalText(file);
    this.textCache.set(file, { key, text });
    return text;
  }

  private async readOptionalText(file: string): Promise<string> {
    try {
      return await fs.readFile(join(this.memoryDir, file), 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return '';
      throw error;
    }
  }
}
