/**
 * The provenance log of MEMORY.md (openspec memory "Requirement: Memory provenance"): `<memory>/MEMORY.provenance.jsonl`,
 * one JSON object per entry added to MEMORY.md — what wrote it (save_memory, Dream, the console), who asked, the chat
 * and turn, and the untrusted content that was in the model's context. Append-only, mode 0600, each append on disk
 * (fsync) before it resolves. MEMORY.md itself stays plain Markdown.
 *
 * A log that is missing, or has lines that cannot be read (a torn last line, a hand edit), never blocks memory: the
 * bad lines are skipped and counted, a warning names the file, and new records are still appended.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  isErrorCode,
  isRecord,
  UNTRUSTED_SOURCE_KINDS,
  type MemoryProvenanceRecord,
  type MemoryProvenanceResponse,
  type UntrustedSource,
} from '@cashcode/contracts';
import { SerialQueue } from '../common/keyed-queue';
import { formatEvent } from '../common/log-format';
import { mkdirPrivate, openPrivate, PRIVATE_FILE_MODE } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export const PROVENANCE_FILE = 'MEMORY.provenance.jsonl';
export const PROVENANCE_DEFAULT_LIMIT = 100;
export const PROVENANCE_MAX_LIMIT = 1000;

const ORIGINS = ['save_memory', 'dream', 'console'];
const REQUESTERS = ['owner', 'api', 'server'];

function isSource(value: unknown): value is UntrustedSource {
  return (
    isRecord(value) &&
    typeof value['name'] === 'string' &&
    (UNTRUSTED_SOURCE_KINDS as readonly unknown[]).includes(value['kind'])
  );
}

/** A record read back from the log, or null when the line is not one. */
export function parseProvenanceLine(line: string): MemoryProvenanceRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const sources = value['untrusted_sources'];
  if (
    typeof value['at'] !== 'string' ||
    typeof value['entry'] !== 'string' ||
    !ORIGINS.includes(value['origin'] as string) ||
    !REQUESTERS.includes(value['requested_by'] as string) ||
    !Array.isArray(sources) ||
    !sources.every(isSource)
  ) {
    return null;
  }
  if (value['verified'] !== undefined && typeof value['verified'] !== 'boolean') return null;
  return value as unknown as MemoryProvenanceRecord;
}

@Injectable()
export class MemoryProvenanceLog {
  private readonly logger = new Logger(MemoryProvenanceLog.name);
  readonly path: string;
  private readonly memoryDir: string;
  private readonly appends = new SerialQueue();

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'memoryDir'>) {
    this.memoryDir = config.memoryDir;
    this.path = join(config.memoryDir, PROVENANCE_FILE);
  }

  /** Appends records (one line each); resolves once they are on disk. */
  append(records: readonly MemoryProvenanceRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.appends.run(async () => {
      await mkdirPrivate(this.memoryDir);
      const handle = await openPrivate(this.path, 'a');
      try {
        await handle.chmod(PRIVATE_FILE_MODE);
        await handle.appendFile(records.map((record) => `${JSON.stringify(record)}\n`).join(''), 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  /** Every readable record, oldest first, how many lines could not be read, and whether the file exists. */
  async readAll(): Promise<{ records: MemoryProvenanceRecord[]; unreadable: number; missing: boolean }> {
    await this.appends.settled();
    let text = '';
    let missing = false;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT', 'ENOTDIR')) throw error;
      missing = true;
    }
    const records: MemoryProvenanceRecord[] = [];
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const record = parseProvenanceLine(line);
      if (record) records.push(record);
      else unreadable++;
    }
    if (unreadable > 0) this.logger.warn(formatEvent('memory.provenance.unreadable_lines', { file: PROVENANCE_FILE, lines: unreadable }));
    return { records, unreadable, missing };
  }

  /** A page of the log, oldest first. */
  async list(offset: number, limit: number): Promise<MemoryProvenanceResponse> {
    const { records, unreadable } = await this.readAll();
    return { records: records.slice(offset, offset + limit), total: records.length, offset, limit, unreadable };
  }
}
